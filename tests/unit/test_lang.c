/* test_lang.c: Check suite for lang/, the runtime layer: values and
 * their Python semantics (arithmetic, comparison, printing, formatting,
 * indexing and slicing, conversions), dicts, UTF-8 strings, the error
 * renderer and the VM helpers.
 *
 * Expected strings are Python 3.11's own output: the tables further
 * down (float reprs, format specs, slices) were produced by running
 * python3 on the same inputs, so they state Python's behaviour, not
 * ours.
 */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "lang/vm.h"

#define NONE INT32_MIN

static MistVM *vm;

static void setup(void) { vm = lang_vm_new(); }
static void teardown(void) {
  lang_vm_free(vm);
  vm = NULL;
}

/* ---- helpers ---- */

static Value S(const char *s) { return v_obj(lang_str(s)); }

static Value list_of(int n, ...) {
  ObjSeq *l = lang_list_new((size_t)n);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) l->items[i] = va_arg(ap, Value);
  va_end(ap);
  return v_obj(l);
}

static Value int_list(int n) {
  ObjSeq *l = lang_list_new((size_t)n);
  for (int i = 0; i < n; i++) l->items[i] = v_int(i);
  return v_obj(l);
}

static const char *repr(Value v) {
  StrBuf sb;
  sb_init(&sb);
  ck_assert(lang_repr(vm, v, &sb));
  return sb.data;
}

static const char *tostr(Value v) {
  StrBuf sb;
  sb_init(&sb);
  ck_assert(lang_tostr(vm, v, &sb));
  return sb.data;
}

/* The error as "Kind: message", cleared. */
static const char *err(void) {
  ck_assert(vm->err.set);
  const char *r = lang_str_fmt("%s: %s", vm->err.kind, vm->err.message->data)->data;
  lang_error_clear(vm);
  return r;
}

static Value arith(ArithOp op, Value a, Value b) {
  Value r;
  if (!lang_arith(vm, op, a, b, &r)) ck_abort_msg("unexpected error: %s", err());
  return r;
}

static const char *arith_err(ArithOp op, Value a, Value b) {
  Value r;
  ck_assert(!lang_arith(vm, op, a, b, &r));
  return err();
}

/* The result of op as repr text, or "Kind: message". */
static const char *ar(ArithOp op, Value a, Value b) {
  Value r;
  if (!lang_arith(vm, op, a, b, &r)) return err();
  return repr(r);
}

static bool cmp(CmpOp op, Value a, Value b) {
  Value r;
  if (!lang_compare(vm, op, a, b, &r)) ck_abort_msg("unexpected error: %s", err());
  ck_assert_int_eq(r.tag, V_BOOL);
  return r.b;
}

static const char *getitem(Value x, Value i) {
  Value r;
  if (!lang_getitem(vm, x, i, &r)) return err();
  return repr(r);
}

static const char *setitem(Value x, Value i, Value v) {
  Value r;
  if (!lang_setitem(vm, x, i, v, &r)) return err();
  return repr(r);
}

static const char *fmt(Value v, const char *spec) {
  StrBuf sb;
  sb_init(&sb);
  if (!lang_format(vm, v, spec, strlen(spec), &sb)) {
    const char *e = err();
    return lang_str_fmt("!%s", e)->data;
  }
  return sb.data;
}

static Value slice(int a, int b, int c) {
  return lang_slice_new(a == NONE ? v_none() : v_int(a), b == NONE ? v_none() : v_int(b),
                        c == NONE ? v_none() : v_int(c));
}

static const struct { double d; const char *repr; } float_reprs[] = {
  {0x1.999999999999ap-4, "0.1"},
  {0x1.0000000000000p+0, "1.0"},
  {0x1.4f8b588e368f1p-17, "1e-05"},
  {0x1.1c37937e08000p+53, "1e+16"},
  {0x1.1c37937e07fffp+53, "9999999999999998.0"},
  {0x1.1c37937e07fffp+53, "9999999999999998.0"},
  {0x1.d6f34547df3b6p+26, "123456789.123"},
  {-0.0, "-0.0"},
  {0x0.0p+0, "0.0"},
  {0x0.0000000000001p-1022, "5e-324"},
  {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
  {0x1.3333333333334p-2, "0.30000000000000004"},
  {0x1.0f0cf064dd592p+73, "1e+22"},
  {0x1.1eb2d66005835p+997, "1.5e+300"},
  {0x1.a36e2eb1c432dp-14, "0.0001"},
  {0x1.02e4b6ce5dc68p-13, "0.00012345"},
  {0x1.ec00000000000p+6, "123.0"},
  {0x1.c6bf526340000p+49, "1000000000000000.0"},
  {0x0.0000000000003p-1022, "1.5e-323"},
  {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
  {0x1.9000000000000p+6, "100.0"},
  {0x1.5555555555555p-2, "0.3333333333333333"},
  {0x1.5555555555555p-1, "0.6666666666666666"},
  {-0x1.8000000000000p+0, "-1.5"},
  {0x1.921f9f01b866ep+1, "3.14159"},
  {0x1.0000000000000p+63, "9.223372036854776e+18"},
  {0x1.0000000000001p+53, "9007199254740994.0"},
  {0x1.a36e2eb1c432dp-14, "0.0001"},
  {0x1.a36e2eb1c432cp-14, "9.999999999999999e-05"},
  {0x1.52d02c7e14af6p+76, "1e+23"},
  {0x0.05c0ab9347ed7p-1022, "5e-310"},
  {0x1.d313e3b79fe9fp-22, "4.35e-07"},
  {0x1.3333333333333p-2, "0.3"},
  {0x1.249ad2594c37dp+332, "1e+100"},
  {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
  {-0x1.74de452e6b438p+811, "-1.989032661366619e+244"},
  {0x1.3270e269e0d37p+594, "7.761117632285041e+178"},
  {0x1.c7fd0a6a3a450p-826, "3.980498358697587e-249"},
  {-0x1.f0824128b2f33p+292, "-1.5432835417340557e+88"},
  {0x1.8e811892f902bp-638, "1.3647584518757569e-192"},
  {-0x1.1985d5d9dc9f8p-684, "-1.3701135617873088e-206"},
  {-0x1.25d940ed90475p+655, "-1.7160537630466207e+197"},
  {0x1.675cc81e74ef5p-144, "6.294675241195386e-44"},
  {0x1.0a35a099950d8p-671, "1.0613447212142254e-202"},
  {0x1.d549b6f03675ap+689, "4.708325160387546e+207"},
  {0x1.c172411e20b8fp-38, "6.387016158513563e-12"},
  {-0x1.16ece1738f7d9p-814, "-9.973130378568733e-246"},
  {0x1.1ddb66cad4a26p-781, "8.779753225680271e-236"},
  {-0x1.192cfd3ac94afp-755, "-5.795503248498993e-228"},
  {-0x1.c105d1fb17c23p+809, "-5.988180159386011e+243"},
  {-0x1.0b33839263059p-488, "-1.306052388527796e-147"},
  {-0x1.f48f1a09f76b5p-684, "-2.436117699484841e-206"},
  {0x1.630f1f29d0da9p-770, "2.233386999150174e-232"},
  {-0x1.60af593bd04cfp-673, "-3.51527970626667e-203"},
  {0x1.1e29c658cda14p-820, "1.5987381841032883e-247"},
  {0x1.8d190f9ebdaccp-118, "4.6678633181812096e-36"},
  {-0x1.1973e0becd7b0p-791, "-8.441872792105456e-239"},
  {0x1.7beaddbc496cbp-478, "1.9015657400796622e-144"},
  {0x1.cb2424a23d596p+693, "7.370437700706684e+208"},
  {-0x1.a63ec24ede6a4p-857, "-1.7163996725272777e-258"},
  {-0x1.766581e27a1c0p-733, "-3.2367190832119987e-221"},
  {-0x1.d05584ef8aa38p-777, "-2.2818334634712625e-234"},
  {-0x1.7ba94d0eda82fp-278, "-3.0536383926309363e-84"},
  {0x1.1dbe22e44158bp-601, "1.3449551894627777e-181"},
  {-0x1.a736994e3bf91p-732, "-7.317495976062606e-221"},
  {0x1.850c5a38fd547p-254, "5.249822308814304e-77"},
  {0x1.135d25f557203p-624, "1.5450754142984396e-188"},
  {-0x1.ce4228c38fb29p-155, "-3.953625698224792e-47"},
  {-0x1.a70c31012f037p-760, "-2.72491267476498e-229"},
  {-0x1.769b10f4205b4p-536, "-6.505141861548772e-162"},
  {0x1.5052434b9b5dfp+1010, "1.441484839555994e+304"},
  {-0x1.ed162ae2eb154p-894, "-1.4583679262758548e-269"},
  {-0x1.877186d76b07ep+112, "-7.939416668807721e+33"},
  {0x1.1af10506bf2efp+884, "1.4255183989699612e+266"},
  {-0x1.6a78795e761d1p+711, "-1.525315701232403e+214"},
  {0x1.0a9587403e430p+458, "7.750545741548908e+137"},
  {0x1.8e2774cbd87adp-6, "0.024301399287089676"},
  {0x1.5319acb5c7427p-287, "5.326960081783017e-87"},
  {-0x1.2ea20b2f14c94p+123, "-1.2570882301712172e+37"},
  {0x1.4733f3e7d1bfbp-688, "9.952684009002448e-208"},
  {0x1.d2055930d6eafp+206, "1.8721667527122837e+62"},
  {0x1.ff20686734721p+1004, "3.422978398947072e+302"},
  {0x1.e05cde00902c7p+383, "3.6967297937384553e+115"},
  {0x1.6cc3ababced20p+815, "3.113284956169447e+245"},
  {-0x1.4bcfc49b64a08p-577, "-2.6202582260546103e-174"},
  {0x1.d4acefaecbd38p-724, "2.0745096302730225e-218"},
  {-0x1.e07bc1e398f10p-975, "-5.877500503097409e-294"},
  {0x1.af4d46b0a18e8p-348, "2.938345597354166e-105"},
  {0x1.0f82ec1d3fcffp+378, "6.529598674765832e+113"},
  {-0x1.acbe226e87555p+751, "-1.9837344250050814e+226"},
  {0x1.46c697d2caf82p+704, "1.0743030475716402e+212"},
  {-0x1.6e1f40a097c97p+869, "-5.629271400715247e+261"},
  {0x1.eef86ab1031d0p-706, "5.743310614918485e-213"},
  {-0x1.e0d7ac3baea9ep-786, "-4.61515470702556e-237"},
  {-0x1.2135e92b1d3f2p+161, "-3.302201168194502e+48"},
  {-0x1.f9acae01f5057p+280, "-3.8373366379117136e+84"},
  {0x1.242425051c1ccp+370, "2.7444240984593666e+111"},
  {0x1.54a7bb1fee08fp+411, "7.037254769664525e+123"},
  {0x1.6144b98289fcdp+1011, "3.0282415270685036e+304"},
  {-0x1.11cdd9474031bp+193, "-1.3427313830183207e+58"},
  {0x1.a72d174c9df6ap-742, "7.145365052251808e-224"},
  {0x1.5e837d70820fep-640, "3.0010119427191346e-193"},
  {0x1.abd81f1d69ed6p+82, "8.08174890787967e+24"},
  {-0x1.15945795e8229p-216, "-1.029599445714058e-65"},
  {0x1.3d6b2aa05e11ap-757, "1.6356324386913733e-228"},
  {-0x1.d420f0f88080bp-77, "-1.210084267904234e-23"},
  {0x1.26dcbb394fb36p+245, "6.512205859834416e+73"},
  {-0x1.448b3a5aa3c81p-704, "-1.5063173670565552e-212"},
  {-0x1.58f33fe3b890bp-281, "-3.468068334360956e-85"},
  {0x1.58370d269a9a5p+802, "3.5862982565236525e+241"},
  {-0x1.4eb5248db40afp-136, "-1.500880737539812e-41"},
  {-0x1.5128862c33a4fp+562, "-1.9881605394901064e+169"},
  {0x1.5563dab2cd31ep+398, "8.608929980762736e+119"},
  {-0x1.e583505c6af07p+781, "-2.412056419517317e+235"},
  {0x1.fb2297631a992p+432, "2.1970596639628e+130"},
  {-0x1.539382b0537e6p-569, "-6.864829614150003e-172"},
  {0x1.2aa0a1df9fd78p+999, "6.249646571111859e+300"},
  {0x1.c76fb0f17a300p-130, "1.3070380624806793e-39"},
  {0x1.52399c4aaeac1p+154, "3.0170681842882087e+46"},
  {-0x1.561e6211c70cfp-47, "-9.495701001087435e-15"},
  {0x1.c9f503f63af83p+606, "4.750750204750985e+182"},
  {-0x1.477d26415479cp+684, "-1.0267710304426359e+206"},
  {0x1.b103cdf1582b0p+1010, "1.8559166032057722e+304"},
  {0x1.6fb1a14a0f9e7p-342, "1.6032007377980954e-103"},
  {0x1.2287672fdf202p+622, "1.9751801151887592e+187"},
  {0x1.8b9999999999ap+6, "98.9"},
  {0x1.3f47a376922d9p+9, "638.559676"},
  {0x1.91c1a60d4562ep+6, "100.43911"},
  {-0x1.52d1eb851eb85p+7, "-169.41"},
  {0x1.6d722d0e56042p+8, "365.446"},
  {0x1.c9c0000000000p+9, "915.5"},
  {-0x1.a100000000000p+9, "-834.0"},
  {-0x1.0c0cccccccccdp+9, "-536.1"},
  {-0x1.e7efdb4cc2507p+9, "-975.87388"},
  {0x1.6480000000000p+7, "178.25"},
  {-0x1.b41999999999ap+8, "-436.1"},
  {-0x1.443851eb851ecp+7, "-162.11"},
  {0x1.b73d70a3d70a4p+7, "219.62"},
  {0x1.c519119ce075fp+9, "906.19585"},
  {0x1.6733b2fec56d6p+9, "718.4039"},
  {0x1.35eed4801f751p+8, "309.93293"},
  {-0x1.be01d1c3ac92ap+9, "-892.014214"},
  {0x1.17f8308787486p+9, "559.938981"},
  {0x1.69267381d7dbfp+8, "361.1502"},
  {-0x1.ae7be76c8b439p+7, "-215.242"},
  {-0x1.a7851eb851eb8p+7, "-211.76"},
  {0x1.0d00000000000p+8, "269.0"},
  {-0x1.3566666666666p+9, "-618.8"},
  {-0x1.dc00000000000p+6, "-119.0"},
  {-0x1.4000000000000p+8, "-320.0"},
  {0x1.0000000000000p-655, "6.688871304346933e-198"},
  {0x0.0000000000001p-1022, "5e-324"},
  {0x1.0000000000000p-455, "1.0748601772107342e-137"},
  {0x1.0000000000000p-659, "4.180544565216833e-199"},
  {0x1.0000000000000p+415, "8.461516400515182e+124"},
  {0x1.0000000000000p-970, "1.0020841800044864e-292"},
  {0x1.0000000000000p-786, "2.457103259886602e-237"},
  {0x1.0000000000000p-223, "7.418412301374843e-68"},
  {0x1.0000000000000p+467, "3.8107282108349515e+140"},
  {0x1.0000000000000p-466, "5.248340709036788e-141"},
  {0x1.0000000000000p-41, "4.547473508864641e-13"},
  {0x1.0000000000000p+348, "5.733746539975179e+104"},
  {0x1.0000000000000p+417, "3.384606560206073e+125"},
  {0x1.0000000000000p+868, "1.9680504915701793e+261"},
  {0x1.0000000000000p-571, "1.2938158758247024e-172"},
};
static const struct { int kind; long long i; double f; const char *s; const char *spec; const char *want; } format_cases[] = {
  {0, 0LL, 0, NULL, "08", "00000000"},
  {0, 0LL, 0, NULL, "\303\251>5", "\303\251\303\251\303\251\303\2510"},
  {0, 0LL, 0, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, 0LL, 0, NULL, "*<6", "0*****"},
  {0, 0LL, 0, NULL, "#", "0"},
  {0, 0LL, 0, NULL, ".1", "!ValueError: Precision not allowed in integer format specifier"},
  {0, 0LL, 0, NULL, "+", "+0"},
  {0, 1LL, 0, NULL, ",", "1"},
  {0, 1LL, 0, NULL, "+8", "      +1"},
  {0, 1LL, 0, NULL, "%", "100.000000%"},
  {0, 1LL, 0, NULL, "E", "1.000000E+00"},
  {0, 1LL, 0, NULL, "*<6", "1*****"},
  {0, 1LL, 0, NULL, "X", "1"},
  {0, 1LL, 0, NULL, "=+10.2f", "+     1.00"},
  {0, -1LL, 0, NULL, "5", "   -1"},
  {0, -1LL, 0, NULL, "o", "-1"},
  {0, -1LL, 0, NULL, "0=12,", "-000,000,001"},
  {0, -1LL, 0, NULL, "<10.2e", "-1.00e+00 "},
  {0, -1LL, 0, NULL, ",", "-1"},
  {0, -1LL, 0, NULL, "05", "-0001"},
  {0, -1LL, 0, NULL, ".3", "!ValueError: Precision not allowed in integer format specifier"},
  {0, 7LL, 0, NULL, "-", "7"},
  {0, 7LL, 0, NULL, "E", "7.000000E+00"},
  {0, 7LL, 0, NULL, "=+10.2f", "+     7.00"},
  {0, 7LL, 0, NULL, "<10.2e", "7.00e+00  "},
  {0, 7LL, 0, NULL, "#x", "0x7"},
  {0, 7LL, 0, NULL, "10.3f", "     7.000"},
  {0, 7LL, 0, NULL, ".2f", "7.00"},
  {0, 42LL, 0, NULL, "z", "!ValueError: Negative zero coercion (z) not allowed in integer format specifier"},
  {0, 42LL, 0, NULL, "#", "42"},
  {0, 42LL, 0, NULL, "#.0f", "42."},
  {0, 42LL, 0, NULL, "#g", "42.0000"},
  {0, 42LL, 0, NULL, ".2f", "42.00"},
  {0, 42LL, 0, NULL, "#o", "0o52"},
  {0, 42LL, 0, NULL, "f", "42.000000"},
  {0, -42LL, 0, NULL, ",.2f", "-42.00"},
  {0, -42LL, 0, NULL, ".0f", "-42"},
  {0, -42LL, 0, NULL, "b", "-101010"},
  {0, -42LL, 0, NULL, "=+10.2f", "-    42.00"},
  {0, -42LL, 0, NULL, "n", "-42"},
  {0, -42LL, 0, NULL, "10.3f", "   -42.000"},
  {0, -42LL, 0, NULL, "05", "-0042"},
  {0, 1234LL, 0, NULL, "05", "01234"},
  {0, 1234LL, 0, NULL, "g", "1234"},
  {0, 1234LL, 0, NULL, "^8.2", "!ValueError: Precision not allowed in integer format specifier"},
  {0, 1234LL, 0, NULL, "E", "1.234000E+03"},
  {0, 1234LL, 0, NULL, "#o", "0o2322"},
  {0, 1234LL, 0, NULL, ".1%", "123400.0%"},
  {0, 1234LL, 0, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, -1234LL, 0, NULL, "", "-1234"},
  {0, -1234LL, 0, NULL, "d", "-1234"},
  {0, -1234LL, 0, NULL, "5", "-1234"},
  {0, -1234LL, 0, NULL, "05", "-1234"},
  {0, -1234LL, 0, NULL, "<5", "-1234"},
  {0, -1234LL, 0, NULL, ">5", "-1234"},
  {0, -1234LL, 0, NULL, "^5", "-1234"},
  {0, -1234LL, 0, NULL, "^6", "-1234 "},
  {0, -1234LL, 0, NULL, "*^9", "**-1234**"},
  {0, -1234LL, 0, NULL, "=8", "-   1234"},
  {0, -1234LL, 0, NULL, "+", "-1234"},
  {0, -1234LL, 0, NULL, "-", "-1234"},
  {0, -1234LL, 0, NULL, " ", "-1234"},
  {0, -1234LL, 0, NULL, "+8", "   -1234"},
  {0, -1234LL, 0, NULL, "08", "-0001234"},
  {0, -1234LL, 0, NULL, "010,", "-0,001,234"},
  {0, -1234LL, 0, NULL, "_", "-1_234"},
  {0, -1234LL, 0, NULL, "_x", "-4d2"},
  {0, -1234LL, 0, NULL, ",", "-1,234"},
  {0, -1234LL, 0, NULL, "x", "-4d2"},
  {0, -1234LL, 0, NULL, "X", "-4D2"},
  {0, -1234LL, 0, NULL, "#x", "-0x4d2"},
  {0, -1234LL, 0, NULL, "#X", "-0X4D2"},
  {0, -1234LL, 0, NULL, "#b", "-0b10011010010"},
  {0, -1234LL, 0, NULL, "#o", "-0o2322"},
  {0, -1234LL, 0, NULL, "b", "-10011010010"},
  {0, -1234LL, 0, NULL, "o", "-2322"},
  {0, -1234LL, 0, NULL, "c", "!OverflowError: %c arg not in range(0x110000)"},
  {0, -1234LL, 0, NULL, ".2f", "-1234.00"},
  {0, -1234LL, 0, NULL, ".0f", "-1234"},
  {0, -1234LL, 0, NULL, "f", "-1234.000000"},
  {0, -1234LL, 0, NULL, "F", "-1234.000000"},
  {0, -1234LL, 0, NULL, "e", "-1.234000e+03"},
  {0, -1234LL, 0, NULL, "E", "-1.234000E+03"},
  {0, -1234LL, 0, NULL, ".3e", "-1.234e+03"},
  {0, -1234LL, 0, NULL, "g", "-1234"},
  {0, -1234LL, 0, NULL, "G", "-1234"},
  {0, -1234LL, 0, NULL, ".3g", "-1.23e+03"},
  {0, -1234LL, 0, NULL, ".3", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, ".1", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, ".0", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, "#.3", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, "#g", "-1234.00"},
  {0, -1234LL, 0, NULL, "%", "-123400.000000%"},
  {0, -1234LL, 0, NULL, ".1%", "-123400.0%"},
  {0, -1234LL, 0, NULL, "10.3f", " -1234.000"},
  {0, -1234LL, 0, NULL, "<10.2e", "-1.23e+03 "},
  {0, -1234LL, 0, NULL, "+.2f", "-1234.00"},
  {0, -1234LL, 0, NULL, " .2f", "-1234.00"},
  {0, -1234LL, 0, NULL, "z.2f", "-1234.00"},
  {0, -1234LL, 0, NULL, "+z.1f", "-1234.0"},
  {0, -1234LL, 0, NULL, ",.2f", "-1,234.00"},
  {0, -1234LL, 0, NULL, "_.3f", "-1_234.000"},
  {0, -1234LL, 0, NULL, "015.3f", "-0000001234.000"},
  {0, -1234LL, 0, NULL, ".10", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, ".17", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, ".20g", "-1234"},
  {0, -1234LL, 0, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, -1234LL, 0, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, -1234LL, 0, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, -1234LL, 0, NULL, "^8.2", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, "*<6", "-1234*"},
  {0, -1234LL, 0, NULL, "\303\251>5", "-1234"},
  {0, -1234LL, 0, NULL, "n", "-1234"},
  {0, -1234LL, 0, NULL, "#.0f", "-1234."},
  {0, -1234LL, 0, NULL, "#.0e", "-1.e+03"},
  {0, -1234LL, 0, NULL, "=+10.2f", "-  1234.00"},
  {0, -1234LL, 0, NULL, "0=12,", "-000,001,234"},
  {0, -1234LL, 0, NULL, "z", "!ValueError: Negative zero coercion (z) not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, "#", "-1234"},
  {0, -1234LL, 0, NULL, ".2d", "!ValueError: Precision not allowed in integer format specifier"},
  {0, -1234LL, 0, NULL, "=5", "-1234"},
  {0, -1234LL, 0, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, 1234567LL, 0, NULL, ".1%", "123456700.0%"},
  {0, 1234567LL, 0, NULL, "<10.2e", "1.23e+06  "},
  {0, 1234567LL, 0, NULL, "+", "+1234567"},
  {0, 1234567LL, 0, NULL, ".2f", "1234567.00"},
  {0, 1234567LL, 0, NULL, "+8", "+1234567"},
  {0, 1234567LL, 0, NULL, ".0f", "1234567"},
  {0, 1234567LL, 0, NULL, "^8.2", "!ValueError: Precision not allowed in integer format specifier"},
  {0, 255LL, 0, NULL, "b", "11111111"},
  {0, 255LL, 0, NULL, "%", "25500.000000%"},
  {0, 255LL, 0, NULL, "o", "377"},
  {0, 255LL, 0, NULL, "*<6", "255***"},
  {0, 255LL, 0, NULL, "", "255"},
  {0, 255LL, 0, NULL, "#", "255"},
  {0, 255LL, 0, NULL, ".1%", "25500.0%"},
  {0, -255LL, 0, NULL, "+", "-255"},
  {0, -255LL, 0, NULL, "010,", "-0,000,255"},
  {0, -255LL, 0, NULL, "z.2f", "-255.00"},
  {0, -255LL, 0, NULL, "b", "-11111111"},
  {0, -255LL, 0, NULL, "*<6", "-255**"},
  {0, -255LL, 0, NULL, "#X", "-0XFF"},
  {0, -255LL, 0, NULL, ".17", "!ValueError: Precision not allowed in integer format specifier"},
  {0, 9223372036854775807LL, 0, NULL, "#g", "9.22337e+18"},
  {0, 9223372036854775807LL, 0, NULL, "-", "9223372036854775807"},
  {0, 9223372036854775807LL, 0, NULL, "+z.1f", "+9223372036854775808.0"},
  {0, 9223372036854775807LL, 0, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, 9223372036854775807LL, 0, NULL, ",.2f", "9,223,372,036,854,775,808.00"},
  {0, 9223372036854775807LL, 0, NULL, "+", "+9223372036854775807"},
  {0, 9223372036854775807LL, 0, NULL, "X", "7FFFFFFFFFFFFFFF"},
  {0, (-9223372036854775807LL-1), 0, NULL, "#x", "-0x8000000000000000"},
  {0, (-9223372036854775807LL-1), 0, NULL, "_", "-9_223_372_036_854_775_808"},
  {0, (-9223372036854775807LL-1), 0, NULL, "05", "-9223372036854775808"},
  {0, (-9223372036854775807LL-1), 0, NULL, "x", "-8000000000000000"},
  {0, (-9223372036854775807LL-1), 0, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'int'"},
  {0, (-9223372036854775807LL-1), 0, NULL, ",", "-9,223,372,036,854,775,808"},
  {0, (-9223372036854775807LL-1), 0, NULL, "^8.2", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, "", "True"},
  {3, 1LL, 0, NULL, "d", "1"},
  {3, 1LL, 0, NULL, "5", "    1"},
  {3, 1LL, 0, NULL, "05", "00001"},
  {3, 1LL, 0, NULL, "<5", "1    "},
  {3, 1LL, 0, NULL, ">5", "    1"},
  {3, 1LL, 0, NULL, "^5", "  1  "},
  {3, 1LL, 0, NULL, "^6", "  1   "},
  {3, 1LL, 0, NULL, "*^9", "****1****"},
  {3, 1LL, 0, NULL, "=8", "       1"},
  {3, 1LL, 0, NULL, "+", "+1"},
  {3, 1LL, 0, NULL, "-", "1"},
  {3, 1LL, 0, NULL, " ", " 1"},
  {3, 1LL, 0, NULL, "+8", "      +1"},
  {3, 1LL, 0, NULL, "08", "00000001"},
  {3, 1LL, 0, NULL, "010,", "00,000,001"},
  {3, 1LL, 0, NULL, "_", "1"},
  {3, 1LL, 0, NULL, "_x", "1"},
  {3, 1LL, 0, NULL, ",", "1"},
  {3, 1LL, 0, NULL, "x", "1"},
  {3, 1LL, 0, NULL, "X", "1"},
  {3, 1LL, 0, NULL, "#x", "0x1"},
  {3, 1LL, 0, NULL, "#X", "0X1"},
  {3, 1LL, 0, NULL, "#b", "0b1"},
  {3, 1LL, 0, NULL, "#o", "0o1"},
  {3, 1LL, 0, NULL, "b", "1"},
  {3, 1LL, 0, NULL, "o", "1"},
  {3, 1LL, 0, NULL, "c", "\001"},
  {3, 1LL, 0, NULL, ".2f", "1.00"},
  {3, 1LL, 0, NULL, ".0f", "1"},
  {3, 1LL, 0, NULL, "f", "1.000000"},
  {3, 1LL, 0, NULL, "F", "1.000000"},
  {3, 1LL, 0, NULL, "e", "1.000000e+00"},
  {3, 1LL, 0, NULL, "E", "1.000000E+00"},
  {3, 1LL, 0, NULL, ".3e", "1.000e+00"},
  {3, 1LL, 0, NULL, "g", "1"},
  {3, 1LL, 0, NULL, "G", "1"},
  {3, 1LL, 0, NULL, ".3g", "1"},
  {3, 1LL, 0, NULL, ".3", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, ".1", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, ".0", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, "#.3", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, "#g", "1.00000"},
  {3, 1LL, 0, NULL, "%", "100.000000%"},
  {3, 1LL, 0, NULL, ".1%", "100.0%"},
  {3, 1LL, 0, NULL, "10.3f", "     1.000"},
  {3, 1LL, 0, NULL, "<10.2e", "1.00e+00  "},
  {3, 1LL, 0, NULL, "+.2f", "+1.00"},
  {3, 1LL, 0, NULL, " .2f", " 1.00"},
  {3, 1LL, 0, NULL, "z.2f", "1.00"},
  {3, 1LL, 0, NULL, "+z.1f", "+1.0"},
  {3, 1LL, 0, NULL, ",.2f", "1.00"},
  {3, 1LL, 0, NULL, "_.3f", "1.000"},
  {3, 1LL, 0, NULL, "015.3f", "00000000001.000"},
  {3, 1LL, 0, NULL, ".10", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, ".17", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, ".20g", "1"},
  {3, 1LL, 0, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'bool'"},
  {3, 1LL, 0, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'bool'"},
  {3, 1LL, 0, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'bool'"},
  {3, 1LL, 0, NULL, "^8.2", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, "*<6", "1*****"},
  {3, 1LL, 0, NULL, "\303\251>5", "\303\251\303\251\303\251\303\2511"},
  {3, 1LL, 0, NULL, "n", "1"},
  {3, 1LL, 0, NULL, "#.0f", "1."},
  {3, 1LL, 0, NULL, "#.0e", "1.e+00"},
  {3, 1LL, 0, NULL, "=+10.2f", "+     1.00"},
  {3, 1LL, 0, NULL, "0=12,", "0,000,000,001"},
  {3, 1LL, 0, NULL, "z", "!ValueError: Negative zero coercion (z) not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, "#", "1"},
  {3, 1LL, 0, NULL, ".2d", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 1LL, 0, NULL, "=5", "    1"},
  {3, 1LL, 0, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'bool'"},
  {3, 0LL, 0, NULL, ".1%", "0.0%"},
  {3, 0LL, 0, NULL, "x", "0"},
  {3, 0LL, 0, NULL, ".2d", "!ValueError: Precision not allowed in integer format specifier"},
  {3, 0LL, 0, NULL, "_", "0"},
  {3, 0LL, 0, NULL, "5", "    0"},
  {3, 0LL, 0, NULL, "d", "0"},
  {3, 0LL, 0, NULL, "+8", "      +0"},
  {1, 0, 0x0.0p+0, NULL, "0=12,", "00,000,000.0"},
  {1, 0, 0x0.0p+0, NULL, "_x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x0.0p+0, NULL, ".17", "0.0"},
  {1, 0, 0x0.0p+0, NULL, "#o", "!ValueError: Unknown format code 'o' for object of type 'float'"},
  {1, 0, 0x0.0p+0, NULL, "c", "!ValueError: Unknown format code 'c' for object of type 'float'"},
  {1, 0, 0x0.0p+0, NULL, "05", "000.0"},
  {1, 0, 0x0.0p+0, NULL, "e", "0.000000e+00"},
  {1, 0, -0.0, NULL, "", "-0.0"},
  {1, 0, -0.0, NULL, "d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, -0.0, NULL, "5", " -0.0"},
  {1, 0, -0.0, NULL, "05", "-00.0"},
  {1, 0, -0.0, NULL, "<5", "-0.0 "},
  {1, 0, -0.0, NULL, ">5", " -0.0"},
  {1, 0, -0.0, NULL, "^5", "-0.0 "},
  {1, 0, -0.0, NULL, "^6", " -0.0 "},
  {1, 0, -0.0, NULL, "*^9", "**-0.0***"},
  {1, 0, -0.0, NULL, "=8", "-    0.0"},
  {1, 0, -0.0, NULL, "+", "-0.0"},
  {1, 0, -0.0, NULL, "-", "-0.0"},
  {1, 0, -0.0, NULL, " ", "-0.0"},
  {1, 0, -0.0, NULL, "+8", "    -0.0"},
  {1, 0, -0.0, NULL, "08", "-00000.0"},
  {1, 0, -0.0, NULL, "010,", "-000,000.0"},
  {1, 0, -0.0, NULL, "_", "-0.0"},
  {1, 0, -0.0, NULL, "_x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, -0.0, NULL, ",", "-0.0"},
  {1, 0, -0.0, NULL, "x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, -0.0, NULL, "X", "!ValueError: Unknown format code 'X' for object of type 'float'"},
  {1, 0, -0.0, NULL, "#x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, -0.0, NULL, "#X", "!ValueError: Unknown format code 'X' for object of type 'float'"},
  {1, 0, -0.0, NULL, "#b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, -0.0, NULL, "#o", "!ValueError: Unknown format code 'o' for object of type 'float'"},
  {1, 0, -0.0, NULL, "b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, -0.0, NULL, "o", "!ValueError: Unknown format code 'o' for object of type 'float'"},
  {1, 0, -0.0, NULL, "c", "!ValueError: Unknown format code 'c' for object of type 'float'"},
  {1, 0, -0.0, NULL, ".2f", "-0.00"},
  {1, 0, -0.0, NULL, ".0f", "-0"},
  {1, 0, -0.0, NULL, "f", "-0.000000"},
  {1, 0, -0.0, NULL, "F", "-0.000000"},
  {1, 0, -0.0, NULL, "e", "-0.000000e+00"},
  {1, 0, -0.0, NULL, "E", "-0.000000E+00"},
  {1, 0, -0.0, NULL, ".3e", "-0.000e+00"},
  {1, 0, -0.0, NULL, "g", "-0"},
  {1, 0, -0.0, NULL, "G", "-0"},
  {1, 0, -0.0, NULL, ".3g", "-0"},
  {1, 0, -0.0, NULL, ".3", "-0.0"},
  {1, 0, -0.0, NULL, ".1", "-0e+00"},
  {1, 0, -0.0, NULL, ".0", "-0e+00"},
  {1, 0, -0.0, NULL, "#.3", "-0.00"},
  {1, 0, -0.0, NULL, "#g", "-0.00000"},
  {1, 0, -0.0, NULL, "%", "-0.000000%"},
  {1, 0, -0.0, NULL, ".1%", "-0.0%"},
  {1, 0, -0.0, NULL, "10.3f", "    -0.000"},
  {1, 0, -0.0, NULL, "<10.2e", "-0.00e+00 "},
  {1, 0, -0.0, NULL, "+.2f", "-0.00"},
  {1, 0, -0.0, NULL, " .2f", "-0.00"},
  {1, 0, -0.0, NULL, "z.2f", "0.00"},
  {1, 0, -0.0, NULL, "+z.1f", "+0.0"},
  {1, 0, -0.0, NULL, ",.2f", "-0.00"},
  {1, 0, -0.0, NULL, "_.3f", "-0.000"},
  {1, 0, -0.0, NULL, "015.3f", "-0000000000.000"},
  {1, 0, -0.0, NULL, ".10", "-0.0"},
  {1, 0, -0.0, NULL, ".17", "-0.0"},
  {1, 0, -0.0, NULL, ".20g", "-0"},
  {1, 0, -0.0, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0.0, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0.0, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0.0, NULL, "^8.2", "  -0.0  "},
  {1, 0, -0.0, NULL, "*<6", "-0.0**"},
  {1, 0, -0.0, NULL, "\303\251>5", "\303\251-0.0"},
  {1, 0, -0.0, NULL, "n", "-0"},
  {1, 0, -0.0, NULL, "#.0f", "-0."},
  {1, 0, -0.0, NULL, "#.0e", "-0.e+00"},
  {1, 0, -0.0, NULL, "=+10.2f", "-     0.00"},
  {1, 0, -0.0, NULL, "0=12,", "-0,000,000.0"},
  {1, 0, -0.0, NULL, "z", "0.0"},
  {1, 0, -0.0, NULL, "#", "-0.0"},
  {1, 0, -0.0, NULL, ".2d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, -0.0, NULL, "=5", "- 0.0"},
  {1, 0, -0.0, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.0000000000000p+0, NULL, "c", "!ValueError: Unknown format code 'c' for object of type 'float'"},
  {1, 0, 0x1.0000000000000p+0, NULL, ".3g", "1"},
  {1, 0, 0x1.0000000000000p+0, NULL, "#.0f", "1."},
  {1, 0, 0x1.0000000000000p+0, NULL, "f", "1.000000"},
  {1, 0, 0x1.0000000000000p+0, NULL, "#.3", "1.00"},
  {1, 0, 0x1.0000000000000p+0, NULL, "E", "1.000000E+00"},
  {1, 0, 0x1.0000000000000p+0, NULL, "015.3f", "00000000001.000"},
  {1, 0, -0x1.0000000000000p+0, NULL, "_", "-1.0"},
  {1, 0, -0x1.0000000000000p+0, NULL, "^6", " -1.0 "},
  {1, 0, -0x1.0000000000000p+0, NULL, "10.3f", "    -1.000"},
  {1, 0, -0x1.0000000000000p+0, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0x1.0000000000000p+0, NULL, "=+10.2f", "-     1.00"},
  {1, 0, -0x1.0000000000000p+0, NULL, "015.3f", "-0000000001.000"},
  {1, 0, -0x1.0000000000000p+0, NULL, "#.0f", "-1."},
  {1, 0, 0x1.0000000000000p-1, NULL, "_", "0.5"},
  {1, 0, 0x1.0000000000000p-1, NULL, "z", "0.5"},
  {1, 0, 0x1.0000000000000p-1, NULL, "x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.0000000000000p-1, NULL, "0=12,", "00,000,000.5"},
  {1, 0, 0x1.0000000000000p-1, NULL, "#.0e", "5.e-01"},
  {1, 0, 0x1.0000000000000p-1, NULL, "5", "  0.5"},
  {1, 0, 0x1.0000000000000p-1, NULL, ".20g", "0.5"},
  {1, 0, 0x1.8000000000000p+0, NULL, "#b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, 0x1.8000000000000p+0, NULL, "", "1.5"},
  {1, 0, 0x1.8000000000000p+0, NULL, "x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.8000000000000p+0, NULL, "#X", "!ValueError: Unknown format code 'X' for object of type 'float'"},
  {1, 0, 0x1.8000000000000p+0, NULL, ",", "1.5"},
  {1, 0, 0x1.8000000000000p+0, NULL, "^8.2", "  1.5   "},
  {1, 0, 0x1.8000000000000p+0, NULL, "010,", "0,000,001.5"},
  {1, 0, 0x1.4000000000000p+1, NULL, "=5", "  2.5"},
  {1, 0, 0x1.4000000000000p+1, NULL, "^6", " 2.5  "},
  {1, 0, 0x1.4000000000000p+1, NULL, "#.3", "2.50"},
  {1, 0, 0x1.4000000000000p+1, NULL, "=+10.2f", "+     2.50"},
  {1, 0, 0x1.4000000000000p+1, NULL, "0=12,", "00,000,002.5"},
  {1, 0, 0x1.4000000000000p+1, NULL, "*<6", "2.5***"},
  {1, 0, 0x1.4000000000000p+1, NULL, "+8", "    +2.5"},
  {1, 0, 0x1.0000000000000p-3, NULL, "=5", "0.125"},
  {1, 0, 0x1.0000000000000p-3, NULL, "^6", "0.125 "},
  {1, 0, 0x1.0000000000000p-3, NULL, "F", "0.125000"},
  {1, 0, 0x1.0000000000000p-3, NULL, "#o", "!ValueError: Unknown format code 'o' for object of type 'float'"},
  {1, 0, 0x1.0000000000000p-3, NULL, "g", "0.125"},
  {1, 0, 0x1.0000000000000p-3, NULL, ">5", "0.125"},
  {1, 0, 0x1.0000000000000p-3, NULL, " ", " 0.125"},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, "#.0f", "3."},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, "05", "3.14159"},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, "*^9", "*3.14159*"},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, ".20g", "3.1415899999999998826"},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, "#.3", "3.14"},
  {1, 0, 0x1.921f9f01b866ep+1, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "#.0e", "-3.e+00"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "g", "-3.14159"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "*<6", "-3.14159"},
  {1, 0, -0x1.921f9f01b866ep+1, NULL, "#.0f", "-3."},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "5", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "05", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "<5", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ">5", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "^5", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "^6", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "*^9", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "=8", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "+", "+1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "-", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, " ", " 1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "+8", "+1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "08", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "010,", "1,234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "_", "1_234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "_x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ",", "1,234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "X", "!ValueError: Unknown format code 'X' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#X", "!ValueError: Unknown format code 'X' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#o", "!ValueError: Unknown format code 'o' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "o", "!ValueError: Unknown format code 'o' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "c", "!ValueError: Unknown format code 'c' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".2f", "1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".0f", "1235"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "f", "1234.567800"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "F", "1234.567800"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "e", "1.234568e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "E", "1.234568E+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".3e", "1.235e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "g", "1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "G", "1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".3g", "1.23e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".3", "1.23e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".1", "1e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".0", "1e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#.3", "1.23e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#g", "1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "%", "123456.780000%"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".1%", "123456.8%"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "10.3f", "  1234.568"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "<10.2e", "1.23e+03  "},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "+.2f", "+1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, " .2f", " 1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "z.2f", "1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "+z.1f", "+1234.6"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ",.2f", "1,234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "_.3f", "1_234.568"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "015.3f", "00000001234.568"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".10", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".17", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".20g", "1234.5678000000000338"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "^8.2", "1.2e+03 "},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "*<6", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "\303\251>5", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "n", "1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#.0f", "1235."},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#.0e", "1.e+03"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "=+10.2f", "+  1234.57"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "0=12,", "001,234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "z", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "#", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, ".2d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "=5", "1234.5678"},
  {1, 0, 0x1.34a456d5cfaadp+10, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "F", "-1234.567800"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "=+10.2f", "-  1234.57"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "E", "-1.234568E+03"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "_x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, -0x1.34a456d5cfaadp+10, NULL, "015.3f", "-0000001234.568"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, "010,", "00,001e-07"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, "+z.1f", "+0.0"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, ".20g", "9.9999999999999995475e-08"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, ".0", "1e-07"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, "=8", "   1e-07"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, "f", "0.000000"},
  {1, 0, 0x1.ad7f29abcaf48p-24, NULL, ".10", "1e-07"},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, "=8", "   1e+20"},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, "c", "!ValueError: Unknown format code 'c' for object of type 'float'"},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, ".3", "1e+20"},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, "010,", "00,001e+20"},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, "x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, "<10.2e", "1.00e+20  "},
  {1, 0, 0x1.5af1d78b58c40p+66, NULL, ",", "1e+20"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, "e", "1.234568e+08"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, "_x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, ".2s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, ".2f", "123456789.00"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, " ", " 123456789.0"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, "+z.1f", "+123456789.0"},
  {1, 0, 0x1.d6f3454000000p+26, NULL, "\303\251>5", "123456789.0"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, "X", "!ValueError: Unknown format code 'X' for object of type 'float'"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, ".2f", "0.00"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, "+s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, ".17", "0.001"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, "#.0e", "1.e-03"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, ",.2f", "0.00"},
  {1, 0, 0x1.0624dd2f1a9fcp-10, NULL, "%", "0.100000%"},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, "015.3f", "00000000099.990"},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, "b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, "10.3f", "    99.990"},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, ".0", "1e+02"},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, "-", "99.99"},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, "<10.2e", "1.00e+02  "},
  {1, 0, 0x1.8ff5c28f5c28fp+6, NULL, "5", "99.99"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, "%", "1000000000000000000.000000%"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, ".2d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, ".20g", "10000000000000000"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, "5", "1e+16"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, "z.2f", "10000000000000000.00"},
  {1, 0, 0x1.1c37937e08000p+53, NULL, "#g", "1.00000e+16"},
  {1, 0, INFINITY, NULL, "=+10.2f", "+      inf"},
  {1, 0, INFINITY, NULL, ".3g", "inf"},
  {1, 0, INFINITY, NULL, "#.0e", "inf"},
  {1, 0, INFINITY, NULL, "*^9", "***inf***"},
  {1, 0, INFINITY, NULL, "08", "00000inf"},
  {1, 0, INFINITY, NULL, ".0f", "inf"},
  {1, 0, INFINITY, NULL, "+8", "    +inf"},
  {1, 0, -INFINITY, NULL, "+", "-inf"},
  {1, 0, -INFINITY, NULL, "E", "-INF"},
  {1, 0, -INFINITY, NULL, ".3e", "-inf"},
  {1, 0, -INFINITY, NULL, ">5", " -inf"},
  {1, 0, -INFINITY, NULL, "#b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, -INFINITY, NULL, ".2d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, -INFINITY, NULL, "_", "-inf"},
  {1, 0, NAN, NULL, ".10", "nan"},
  {1, 0, NAN, NULL, "E", "NAN"},
  {1, 0, NAN, NULL, ",.2f", "nan"},
  {1, 0, NAN, NULL, "x", "!ValueError: Unknown format code 'x' for object of type 'float'"},
  {1, 0, NAN, NULL, "z", "nan"},
  {1, 0, NAN, NULL, "#.0e", "nan"},
  {1, 0, NAN, NULL, "n", "nan"},
  {1, 0, 0x1.5555555555555p-2, NULL, "#.3", "0.333"},
  {1, 0, 0x1.5555555555555p-2, NULL, "-", "0.3333333333333333"},
  {1, 0, 0x1.5555555555555p-2, NULL, "g", "0.333333"},
  {1, 0, 0x1.5555555555555p-2, NULL, "^6", "0.3333333333333333"},
  {1, 0, 0x1.5555555555555p-2, NULL, "#b", "!ValueError: Unknown format code 'b' for object of type 'float'"},
  {1, 0, 0x1.5555555555555p-2, NULL, ".10", "0.3333333333"},
  {1, 0, 0x1.5555555555555p-2, NULL, "=8", "0.3333333333333333"},
  {1, 0, 0x1.999999999999ap-5, NULL, ".3e", "5.000e-02"},
  {1, 0, 0x1.999999999999ap-5, NULL, "5", " 0.05"},
  {1, 0, 0x1.999999999999ap-5, NULL, "-", "0.05"},
  {1, 0, 0x1.999999999999ap-5, NULL, "E", "5.000000E-02"},
  {1, 0, 0x1.999999999999ap-5, NULL, "+", "+0.05"},
  {1, 0, 0x1.999999999999ap-5, NULL, ".2f", "0.05"},
  {1, 0, 0x1.999999999999ap-5, NULL, "*^9", "**0.05***"},
  {1, 0, 0x1.5666666666666p+1, NULL, "E", "2.675000E+00"},
  {1, 0, 0x1.5666666666666p+1, NULL, "010,", "00,002.675"},
  {1, 0, 0x1.5666666666666p+1, NULL, ">8s", "!ValueError: Unknown format code 's' for object of type 'float'"},
  {1, 0, 0x1.5666666666666p+1, NULL, "d", "!ValueError: Unknown format code 'd' for object of type 'float'"},
  {1, 0, 0x1.5666666666666p+1, NULL, "%", "267.500000%"},
  {1, 0, 0x1.5666666666666p+1, NULL, "015.3f", "00000000002.675"},
  {1, 0, 0x1.5666666666666p+1, NULL, ".3e", "2.675e+00"},
  {2, 0, 0, "", "_", "!ValueError: Cannot specify '_' with 's'."},
  {2, 0, 0, "", ">5", "     "},
  {2, 0, 0, "", "0=12,", "!ValueError: Cannot specify ',' with 's'."},
  {2, 0, 0, "", "f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "", "08", "00000000"},
  {2, 0, 0, "", "X", "!ValueError: Unknown format code 'X' for object of type 'str'"},
  {2, 0, 0, "", "E", "!ValueError: Unknown format code 'E' for object of type 'str'"},
  {2, 0, 0, "a", "^5", "  a  "},
  {2, 0, 0, "a", "#b", "!ValueError: Unknown format code 'b' for object of type 'str'"},
  {2, 0, 0, "a", "b", "!ValueError: Unknown format code 'b' for object of type 'str'"},
  {2, 0, 0, "a", ".1", "a"},
  {2, 0, 0, "a", "#", "!ValueError: Alternate form (#) not allowed in string format specifier"},
  {2, 0, 0, "a", "0=12,", "!ValueError: Cannot specify ',' with 's'."},
  {2, 0, 0, "a", "o", "!ValueError: Unknown format code 'o' for object of type 'str'"},
  {2, 0, 0, "abc", ".3g", "!ValueError: Unknown format code 'g' for object of type 'str'"},
  {2, 0, 0, "abc", "s", "abc"},
  {2, 0, 0, "abc", "#.0f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "abc", "#X", "!ValueError: Unknown format code 'X' for object of type 'str'"},
  {2, 0, 0, "abc", ".3e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
  {2, 0, 0, "abc", ".1%", "!ValueError: Unknown format code '%' for object of type 'str'"},
  {2, 0, 0, "abc", "5", "abc  "},
  {2, 0, 0, "h\303\251llo", "", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", "d", "!ValueError: Unknown format code 'd' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "5", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", "05", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", "<5", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", ">5", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", "^5", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", "^6", "h\303\251llo "},
  {2, 0, 0, "h\303\251llo", "*^9", "**h\303\251llo**"},
  {2, 0, 0, "h\303\251llo", "=8", "!ValueError: '=' alignment not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "+", "!ValueError: Sign not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "-", "!ValueError: Sign not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", " ", "!ValueError: Space not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "+8", "!ValueError: Sign not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "08", "h\303\251llo000"},
  {2, 0, 0, "h\303\251llo", "010,", "!ValueError: Cannot specify ',' with 's'."},
  {2, 0, 0, "h\303\251llo", "_", "!ValueError: Cannot specify '_' with 's'."},
  {2, 0, 0, "h\303\251llo", "_x", "!ValueError: Unknown format code 'x' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ",", "!ValueError: Cannot specify ',' with 's'."},
  {2, 0, 0, "h\303\251llo", "x", "!ValueError: Unknown format code 'x' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "X", "!ValueError: Unknown format code 'X' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "#x", "!ValueError: Unknown format code 'x' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "#X", "!ValueError: Unknown format code 'X' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "#b", "!ValueError: Unknown format code 'b' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "#o", "!ValueError: Unknown format code 'o' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "b", "!ValueError: Unknown format code 'b' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "o", "!ValueError: Unknown format code 'o' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "c", "!ValueError: Unknown format code 'c' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".2f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".0f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "F", "!ValueError: Unknown format code 'F' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "E", "!ValueError: Unknown format code 'E' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".3e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "g", "!ValueError: Unknown format code 'g' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "G", "!ValueError: Unknown format code 'G' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".3g", "!ValueError: Unknown format code 'g' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".3", "h\303\251l"},
  {2, 0, 0, "h\303\251llo", ".1", "h"},
  {2, 0, 0, "h\303\251llo", ".0", ""},
  {2, 0, 0, "h\303\251llo", "#.3", "!ValueError: Alternate form (#) not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "#g", "!ValueError: Unknown format code 'g' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "%", "!ValueError: Unknown format code '%' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".1%", "!ValueError: Unknown format code '%' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "10.3f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "<10.2e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "+.2f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", " .2f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "z.2f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "+z.1f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ",.2f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "_.3f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "015.3f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", ".10", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", ".17", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", ".20g", "!ValueError: Unknown format code 'g' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "s", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", ">8s", "   h\303\251llo"},
  {2, 0, 0, "h\303\251llo", ".2s", "h\303\251"},
  {2, 0, 0, "h\303\251llo", "^8.2", "   h\303\251   "},
  {2, 0, 0, "h\303\251llo", "*<6", "h\303\251llo*"},
  {2, 0, 0, "h\303\251llo", "\303\251>5", "h\303\251llo"},
  {2, 0, 0, "h\303\251llo", "n", "!ValueError: Unknown format code 'n' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "#.0f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "#.0e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "=+10.2f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "0=12,", "!ValueError: Cannot specify ',' with 's'."},
  {2, 0, 0, "h\303\251llo", "z", "!ValueError: Negative zero coercion (z) not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "#", "!ValueError: Alternate form (#) not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", ".2d", "!ValueError: Unknown format code 'd' for object of type 'str'"},
  {2, 0, 0, "h\303\251llo", "=5", "!ValueError: '=' alignment not allowed in string format specifier"},
  {2, 0, 0, "h\303\251llo", "+s", "!ValueError: Sign not allowed in string format specifier"},
  {2, 0, 0, "\360\237\230\200x", "e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
  {2, 0, 0, "\360\237\230\200x", "<5", "\360\237\230\200x   "},
  {2, 0, 0, "\360\237\230\200x", "d", "!ValueError: Unknown format code 'd' for object of type 'str'"},
  {2, 0, 0, "\360\237\230\200x", "5", "\360\237\230\200x   "},
  {2, 0, 0, "\360\237\230\200x", "#.0f", "!ValueError: Unknown format code 'f' for object of type 'str'"},
  {2, 0, 0, "\360\237\230\200x", "#o", "!ValueError: Unknown format code 'o' for object of type 'str'"},
  {2, 0, 0, "\360\237\230\200x", "#.0e", "!ValueError: Unknown format code 'e' for object of type 'str'"},
};
static const struct { int start, stop, step; const char *list, *str, *range; } slice_cases[] = {
  {5, 2, 7, "[]", "", "range(23, 11, 28)"},
  {0, -100, -3, "[0]", "h", "range(3, -1, -12)"},
  {-100, 5, -9, "[]", "", "range(-1, 23, -36)"},
  {3, -7, -1, "[3, 2, 1]", "ll", "range(15, 3, -4)"},
  {100, 2, 3, "[]", "", "range(31, 11, 12)"},
  {-2, 2, 2, "[]", "", "range(23, 11, 8)"},
  {3, -2, NONE, "[3, 4]", "lo\360\237\230\200", "range(15, 23, 4)"},
  {1, NONE, 1, "[1, 2, 3, 4, 5, 6]", "\303\251llo\360\237\230\200ab", "range(7, 31, 4)"},
  {-100, 100, -1, "[]", "", "range(-1, 27, -4)"},
  {3, 1, NONE, "[]", "", "range(15, 7, 4)"},
  {0, -100, -3, "[0]", "h", "range(3, -1, -12)"},
  {-7, -100, -1, "[0]", "\303\251h", "range(3, -1, -4)"},
  {9, 2, -1, "[6, 5, 4, 3]", "ba\360\237\230\200ol", "range(27, 11, -4)"},
  {NONE, 5, 2, "[0, 2, 4]", "hlo", "range(3, 23, 8)"},
  {1, -1, 7, "[1]", "\303\251", "range(7, 27, 28)"},
  {NONE, -1, -2, "[]", "", "range(27, 27, -8)"},
  {-2, -7, -2, "[5, 3, 1]", "aol", "range(23, 3, -8)"},
  {2, NONE, -1, "[2, 1, 0]", "l\303\251h", "range(11, -1, -4)"},
  {2, -2, 2, "[2, 4]", "lo", "range(11, 23, 8)"},
  {NONE, -2, -3, "[6]", "b", "range(27, 23, -12)"},
  {0, 5, -1, "[]", "", "range(3, 23, -4)"},
  {-7, -100, 3, "[]", "", "range(3, 3, 12)"},
  {2, -7, NONE, "[]", "", "range(11, 3, 4)"},
  {0, -1, 1, "[0, 1, 2, 3, 4, 5]", "h\303\251llo\360\237\230\200a", "range(3, 27, 4)"},
  {1, 3, NONE, "[1, 2]", "\303\251l", "range(7, 15, 4)"},
  {3, NONE, -1, "[3, 2, 1, 0]", "ll\303\251h", "range(15, -1, -4)"},
  {-1, -100, 3, "[]", "", "range(27, 3, 12)"},
  {0, 9, -9, "[]", "", "range(3, 27, -36)"},
  {1, -100, -3, "[1]", "\303\251", "range(7, -1, -12)"},
  {-2, 100, 7, "[5]", "a", "range(23, 31, 28)"},
  {1, -1, 2, "[1, 3, 5]", "\303\251l\360\237\230\200", "range(7, 27, 8)"},
  {NONE, 100, -9, "[]", "", "range(27, 27, -36)"},
  {-100, 3, -9, "[]", "", "range(-1, 15, -36)"},
  {1, -7, -9, "[1]", "", "range(7, 3, -36)"},
  {9, NONE, 3, "[]", "", "range(31, 31, 12)"},
  {0, NONE, NONE, "[0, 1, 2, 3, 4, 5, 6]", "h\303\251llo\360\237\230\200ab", "range(3, 31, 4)"},
  {1, -100, -2, "[1]", "\303\251", "range(7, -1, -8)"},
  {0, 3, 7, "[0]", "h", "range(3, 15, 28)"},
  {-7, NONE, NONE, "[0, 1, 2, 3, 4, 5, 6]", "\303\251llo\360\237\230\200ab", "range(3, 31, 4)"},
  {-100, -7, 3, "[]", "h", "range(3, 3, 12)"},
  {5, -1, NONE, "[5]", "\360\237\230\200a", "range(23, 27, 4)"},
  {5, 0, -9, "[5]", "\360\237\230\200", "range(23, 3, -36)"},
  {-7, 0, -9, "[]", "\303\251", "range(3, 3, -36)"},
  {0, 100, 7, "[0]", "hb", "range(3, 31, 28)"},
  {-1, 0, -1, "[6, 5, 4, 3, 2, 1]", "ba\360\237\230\200oll\303\251", "range(27, 3, -4)"},
  {2, 100, 3, "[2, 5]", "l\360\237\230\200", "range(11, 31, 12)"},
  {2, 100, 7, "[2]", "l", "range(11, 31, 28)"},
  {5, 3, 1, "[]", "", "range(23, 15, 4)"},
  {5, -100, -1, "[5, 4, 3, 2, 1, 0]", "\360\237\230\200oll\303\251h", "range(23, -1, -4)"},
  {NONE, 9, 3, "[0, 3, 6]", "hla", "range(3, 31, 12)"},
  {0, 9, 2, "[0, 2, 4, 6]", "hloa", "range(3, 31, 8)"},
  {-2, -1, -1, "[]", "", "range(23, 27, -4)"},
  {9, 9, 2, "[]", "", "range(31, 31, 8)"},
  {NONE, 5, NONE, "[0, 1, 2, 3, 4]", "h\303\251llo", "range(3, 23, 4)"},
  {5, -1, 1, "[5]", "\360\237\230\200a", "range(23, 27, 4)"},
  {100, 2, 7, "[]", "", "range(31, 11, 28)"},
  {-1, 100, -9, "[]", "", "range(27, 27, -36)"},
  {-1, 5, 7, "[]", "", "range(27, 23, 28)"},
  {5, 0, -9, "[5]", "\360\237\230\200", "range(23, 3, -36)"},
  {2, -1, 1, "[2, 3, 4, 5]", "llo\360\237\230\200a", "range(11, 27, 4)"},
  {5, NONE, -1, "[5, 4, 3, 2, 1, 0]", "\360\237\230\200oll\303\251h", "range(23, -1, -4)"},
  {5, 0, -9, "[5]", "\360\237\230\200", "range(23, 3, -36)"},
  {5, -1, -3, "[]", "", "range(23, 27, -12)"},
  {2, 2, 1, "[]", "", "range(11, 11, 4)"},
  {9, 0, 2, "[]", "", "range(31, 3, 8)"},
  {100, -7, -1, "[6, 5, 4, 3, 2, 1]", "ba\360\237\230\200oll", "range(27, 3, -4)"},
  {-2, 1, -9, "[5]", "a", "range(23, 7, -36)"},
  {-1, 0, -2, "[6, 4, 2]", "b\360\237\230\200l\303\251", "range(27, 3, -8)"},
  {2, 5, 7, "[2]", "l", "range(11, 23, 28)"},
  {3, NONE, 2, "[3, 5]", "l\360\237\230\200b", "range(15, 31, 8)"},
  {NONE, 5, 7, "[0]", "h", "range(3, 23, 28)"},
  {3, -1, 2, "[3, 5]", "l\360\237\230\200", "range(15, 27, 8)"},
  {3, -2, -3, "[]", "", "range(15, 23, -12)"},
  {-2, 0, -2, "[5, 3, 1]", "aol", "range(23, 3, -8)"},
  {NONE, -2, -2, "[6]", "b", "range(27, 23, -8)"},
  {3, 0, 3, "[]", "", "range(15, 3, 12)"},
  {100, NONE, -1, "[6, 5, 4, 3, 2, 1, 0]", "ba\360\237\230\200oll\303\251h", "range(27, -1, -4)"},
  {-1, -2, 1, "[]", "", "range(27, 23, 4)"},
  {3, 3, 1, "[]", "", "range(15, 15, 4)"},
  {-2, 3, -1, "[5, 4]", "a\360\237\230\200o", "range(23, 15, -4)"},
  {NONE, -1, 1, "[0, 1, 2, 3, 4, 5]", "h\303\251llo\360\237\230\200a", "range(3, 27, 4)"},
  {NONE, -100, -1, "[6, 5, 4, 3, 2, 1, 0]", "ba\360\237\230\200oll\303\251h", "range(27, -1, -4)"},
  {-100, 1, 3, "[0]", "h", "range(3, 7, 12)"},
  {-1, 3, -9, "[6]", "b", "range(27, 15, -36)"},
  {-2, 2, -2, "[5, 3]", "ao", "range(23, 11, -8)"},
  {3, NONE, -3, "[3, 0]", "lh", "range(15, -1, -12)"},
  {-7, -7, 3, "[]", "", "range(3, 3, 12)"},
  {100, 0, NONE, "[]", "", "range(31, 3, 4)"},
  {100, 3, 7, "[]", "", "range(31, 15, 28)"},
  {9, 1, -1, "[6, 5, 4, 3, 2]", "ba\360\237\230\200oll", "range(27, 7, -4)"},
  {5, NONE, -9, "[5]", "\360\237\230\200", "range(23, -1, -36)"},
  {1, 1, 7, "[]", "", "range(7, 7, 28)"},
  {3, -2, -1, "[]", "", "range(15, 23, -4)"},
  {-1, -1, -1, "[]", "", "range(27, 27, -4)"},
  {3, -100, 3, "[]", "", "range(15, 3, 12)"},
  {-1, 5, -9, "[6]", "b", "range(27, 23, -36)"},
  {-100, 3, 1, "[0, 1, 2]", "h\303\251l", "range(3, 15, 4)"},
  {1, -100, 2, "[]", "", "range(7, 3, 8)"},
  {0, 2, -9, "[]", "", "range(3, 11, -36)"},
  {5, -7, 3, "[]", "", "range(23, 3, 12)"},
  {5, -2, 7, "[]", "\360\237\230\200", "range(23, 23, 28)"},
  {3, 1, -9, "[3]", "l", "range(15, 7, -36)"},
  {2, 2, 1, "[]", "", "range(11, 11, 4)"},
  {1, -2, -9, "[]", "", "range(7, 23, -36)"},
  {0, -2, 3, "[0, 3]", "hl", "range(3, 23, 12)"},
  {-2, -1, 3, "[5]", "a", "range(23, 27, 12)"},
  {NONE, 100, -3, "[]", "", "range(27, 27, -12)"},
  {3, 3, -9, "[]", "", "range(15, 15, -36)"},
  {2, 3, -1, "[]", "", "range(11, 15, -4)"},
  {-2, NONE, 7, "[5]", "a", "range(23, 31, 28)"},
};

/* ---- printing ---- */

START_TEST(test_float_repr) {
  for (size_t i = 0; i < sizeof float_reprs / sizeof float_reprs[0]; i++) {
    StrBuf sb;
    sb_init(&sb);
    lang_float_repr(float_reprs[i].d, &sb);
    ck_assert_msg(strcmp(sb.data, float_reprs[i].repr) == 0, "repr(%a): got %s, want %s",
                  float_reprs[i].d, sb.data, float_reprs[i].repr);
  }
  ck_assert_str_eq(repr(v_float(INFINITY)), "inf");
  ck_assert_str_eq(repr(v_float(-INFINITY)), "-inf");
  ck_assert_str_eq(repr(v_float(NAN)), "nan");
  ck_assert_str_eq(repr(v_float(-NAN)), "nan");
  ck_assert_str_eq(repr(v_float(-0.0)), "-0.0");
  ck_assert_str_eq(repr(v_float(1e16)), "1e+16");
  ck_assert_str_eq(repr(v_float(1e-5)), "1e-05");
  ck_assert_str_eq(repr(v_float(5e-324)), "5e-324");
}
END_TEST

START_TEST(test_scalar_repr) {
  ck_assert_str_eq(repr(v_int(-42)), "-42");
  ck_assert_str_eq(repr(v_int(INT64_MIN)), "-9223372036854775808");
  ck_assert_str_eq(repr(v_bool(true)), "True");
  ck_assert_str_eq(repr(v_bool(false)), "False");
  ck_assert_str_eq(repr(v_none()), "None");
}
END_TEST

START_TEST(test_str_repr) {
  ck_assert_str_eq(repr(S("abc")), "'abc'");
  ck_assert_str_eq(repr(S("a'b")), "\"a'b\"");
  ck_assert_str_eq(repr(S("a\"b")), "'a\"b'");
  ck_assert_str_eq(repr(S("a'b\"")), "'a\\'b\"'");
  ck_assert_str_eq(repr(S("")), "''");
  ck_assert_str_eq(repr(S("\t\n\r\\")), "'\\t\\n\\r\\\\'");
  ck_assert_str_eq(repr(v_obj(lang_str_new("\0\x01\x1f\x7f", 4))), "'\\x00\\x01\\x1f\\x7f'");
  /* non-ASCII: printable kept, controls, separators and format chars escaped */
  ck_assert_str_eq(repr(S("\u00e9\u00e8 \u4e2d\U0001F600")), "'\u00e9\u00e8 \u4e2d\U0001F600'");
  ck_assert_str_eq(repr(S("\xc2\x80\xc2\xa0\xc2\xad")), "'\\x80\\xa0\\xad'");
  ck_assert_str_eq(repr(S("\u200b\u2028\ue000\ufeff")), "'\\u200b\\u2028\\ue000\\ufeff'");
  ck_assert_str_eq(repr(S("\U000F0000")), "'\\U000f0000'");
  /* str() of a str is the text; inside containers it is the repr */
  ck_assert_str_eq(tostr(S("a'b")), "a'b");
  ck_assert_str_eq(tostr(list_of(2, S("x"), v_float(0.1))), "['x', 0.1]");
}
END_TEST

START_TEST(test_container_repr) {
  ck_assert_str_eq(repr(lang_tuple_of(0)), "()");
  ck_assert_str_eq(repr(lang_tuple_of(1, v_int(1))), "(1,)");
  ck_assert_str_eq(repr(lang_tuple_of(2, v_int(1), v_float(2.0))), "(1, 2.0)");
  ck_assert_str_eq(repr(list_of(0)), "[]");
  ck_assert_str_eq(repr(list_of(3, v_int(1), S("a"), v_none())), "[1, 'a', None]");
  ck_assert_str_eq(repr(list_of(2, lang_tuple_of(1, v_bool(true)), list_of(0))), "[(True,), []]");
  ObjDict *d = lang_dict_new();
  ck_assert_str_eq(repr(v_obj(d)), "{}");
  lang_dict_put(d, lang_str("a"), v_int(1));
  lang_dict_put(d, lang_str("b"), lang_tuple_of(2, v_int(1), v_int(2)));
  ck_assert_str_eq(repr(v_obj(d)), "{'a': 1, 'b': (1, 2)}");
  ck_assert_str_eq(tostr(v_obj(d)), "{'a': 1, 'b': (1, 2)}");
  ck_assert_str_eq(repr(v_obj(lang_range_new(0, 3, 1))), "range(0, 3)");
  ck_assert_str_eq(repr(v_obj(lang_range_new(0, 10, 2))), "range(0, 10, 2)");
  ck_assert_str_eq(repr(slice(1, 2, NONE)), "slice(1, 2, None)");
  ck_assert_str_eq(repr(v_obj(lang_builtin_new("len", NULL, 1, 1))), "<built-in function len>");
  ObjModule *m = lang_alloc(sizeof(ObjModule));
  m->obj.kind = O_MODULE;
  m->name = lang_str("nn");
  ck_assert_str_eq(repr(v_obj(m)), "<module 'nn'>");
  ObjFunc *f = lang_alloc(sizeof(ObjFunc));
  f->obj.kind = O_FUNC;
  ck_assert_str_eq(repr(v_obj(f)), "<function ?>");
}
END_TEST

START_TEST(test_format_table) {
  for (size_t i = 0; i < sizeof format_cases / sizeof format_cases[0]; i++) {
    Value v;
    switch (format_cases[i].kind) {
    case 0: v = v_int(format_cases[i].i); break;
    case 3: v = v_bool(format_cases[i].i != 0); break;
    case 1: v = v_float(format_cases[i].f); break;
    default: v = S(format_cases[i].s); break;
    }
    const char *got = fmt(v, format_cases[i].spec);
    ck_assert_msg(strcmp(got, format_cases[i].want) == 0, "format(%s, '%s'): got '%s', want '%s'",
                  repr(v), format_cases[i].spec, got, format_cases[i].want);
  }
}
END_TEST

START_TEST(test_format_misc) {
  ck_assert_str_eq(fmt(v_float(1.5), ".3"), "1.5");
  ck_assert_str_eq(fmt(v_float(1e20), ".3"), "1e+20");
  ck_assert_str_eq(fmt(v_float(0.25), ".4f"), "0.2500");
  ck_assert_str_eq(fmt(v_int(1234), "08,"), "0,001,234");
  ck_assert_str_eq(fmt(v_int(12345678), "_x"), "bc_614e");
  ck_assert_str_eq(fmt(v_int(42), "c"), "*");
  ck_assert_str_eq(fmt(v_int(0x1F600), "c"), "\U0001F600");
  ck_assert_str_eq(fmt(v_int(0x110000), "c"), "!OverflowError: %c arg not in range(0x110000)");
  ck_assert_str_eq(fmt(v_float(1.0), ".2fx"),
                   "!ValueError: Invalid format specifier '.2fx' for object of type 'float'");
  ck_assert_str_eq(fmt(v_float(1.0), "."), "!ValueError: Format specifier missing precision");
  ck_assert_str_eq(fmt(v_int(1), "999999999999999999999"),
                   "!ValueError: Too many decimal digits in format string");
  ck_assert_str_eq(fmt(v_int(1), ",_"), "!ValueError: Cannot specify both ',' and '_'.");
  ck_assert_str_eq(fmt(v_none(), ""), "None");
  ck_assert_str_eq(fmt(v_none(), "5"),
                   "!TypeError: unsupported format string passed to NoneType.__format__");
  ck_assert_str_eq(fmt(list_of(1, v_int(1)), ""), "[1]");
  ck_assert_str_eq(fmt(S("x"), "\u00e9^5"), "\u00e9\u00e9x\u00e9\u00e9");
  ck_assert_str_eq(fmt(v_float(1e300), ",.0f"),
                   "1,000,000,000,000,000,052,504,760,255,204,420,248,704,468,581,108,159,154,915,85"
                   "4,115,511,802,457,988,908,195,786,371,375,080,447,864,043,704,443,832,883,878,17"
                   "6,942,523,235,360,430,575,644,792,184,786,706,982,848,387,200,926,575,803,737,83"
                   "0,233,794,788,090,059,368,953,234,970,799,945,081,119,038,967,640,880,074,652,74"
                   "2,780,142,494,579,258,788,820,056,842,838,115,669,472,196,386,865,459,400,540,16"
                   "0");
}
END_TEST

/* ---- arithmetic ---- */

START_TEST(test_int_arith) {
  ck_assert_str_eq(ar(OP_FLOORDIV, v_int(-7), v_int(2)), "-4");
  ck_assert_str_eq(ar(OP_MOD, v_int(-7), v_int(2)), "1");
  ck_assert_str_eq(ar(OP_FLOORDIV, v_int(7), v_int(-2)), "-4");
  ck_assert_str_eq(ar(OP_MOD, v_int(7), v_int(-2)), "-1");
  ck_assert_str_eq(ar(OP_FLOORDIV, v_int(-7), v_int(-2)), "3");
  ck_assert_str_eq(ar(OP_MOD, v_int(-7), v_int(-2)), "-1");
  ck_assert_str_eq(ar(OP_MOD, v_int(6), v_int(-3)), "0");
  ck_assert_str_eq(ar(OP_MOD, v_int(INT64_MIN), v_int(-1)), "0");
  ck_assert_str_eq(ar(OP_TRUEDIV, v_int(1), v_int(2)), "0.5");
  ck_assert_str_eq(ar(OP_TRUEDIV, v_int(4), v_int(2)), "2.0");
  ck_assert_str_eq(ar(OP_TRUEDIV, v_int(INT64_MAX), v_int(3)), "3.0744573456182584e+18");
  ck_assert_str_eq(ar(OP_POW, v_int(2), v_int(10)), "1024");
  ck_assert_str_eq(ar(OP_POW, v_int(-2), v_int(63)), "-9223372036854775808");
  ck_assert_str_eq(ar(OP_POW, v_int(-1), v_int(INT64_MAX)), "-1");
  ck_assert_str_eq(ar(OP_POW, v_int(0), v_int(0)), "1");
  ck_assert_str_eq(ar(OP_POW, v_int(2), v_int(-1)), "0.5");
  ck_assert_str_eq(ar(OP_ADD, v_bool(true), v_int(1)), "2");
  ck_assert_str_eq(ar(OP_MUL, v_bool(true), v_bool(true)), "1");
  ck_assert_str_eq(ar(OP_ADD, v_int(1), v_float(0.5)), "1.5");
  const char *ovf = "OverflowError: integer overflow";
  ck_assert_str_eq(ar(OP_ADD, v_int(INT64_MAX), v_int(1)), ovf);
  ck_assert_str_eq(ar(OP_SUB, v_int(INT64_MIN), v_int(1)), ovf);
  ck_assert_str_eq(ar(OP_MUL, v_int(INT64_MAX / 2 + 1), v_int(2)), ovf);
  ck_assert_str_eq(ar(OP_FLOORDIV, v_int(INT64_MIN), v_int(-1)), ovf);
  ck_assert_str_eq(ar(OP_POW, v_int(2), v_int(63)), ovf);
  ck_assert_str_eq(ar(OP_POW, v_int(3), v_int(100)), ovf);
  Value r;
  ck_assert(!lang_neg(vm, v_int(INT64_MIN), &r));
  ck_assert_str_eq(err(), ovf);
  ck_assert(lang_neg(vm, v_bool(true), &r) && r.tag == V_INT && r.i == -1);
  ck_assert(lang_pos(vm, v_bool(true), &r) && r.tag == V_INT && r.i == 1);
  ck_assert_str_eq(ar(OP_FLOORDIV, v_int(1), v_int(0)),
                   "ZeroDivisionError: integer division or modulo by zero");
  ck_assert_str_eq(ar(OP_MOD, v_int(1), v_int(0)), "ZeroDivisionError: integer modulo by zero");
  ck_assert_str_eq(ar(OP_TRUEDIV, v_int(1), v_int(0)), "ZeroDivisionError: division by zero");
  ck_assert_str_eq(ar(OP_POW, v_int(0), v_int(-1)),
                   "ZeroDivisionError: 0.0 cannot be raised to a negative power");
}
END_TEST

START_TEST(test_float_arith) {
  ck_assert_str_eq(ar(OP_MOD, v_float(7.5), v_float(-2)), "-0.5");
  ck_assert_str_eq(ar(OP_FLOORDIV, v_float(-7.5), v_int(2)), "-4.0");
  ck_assert_str_eq(ar(OP_MOD, v_float(-0.0), v_int(5)), "0.0");
  ck_assert_str_eq(ar(OP_FLOORDIV, v_float(0.0), v_int(-3)), "-0.0");
  ck_assert_str_eq(ar(OP_MOD, v_float(-1e-100), v_float(1e100)), "1e+100");
  ck_assert_str_eq(ar(OP_ADD, v_float(0.1), v_float(0.2)), "0.30000000000000004");
  ck_assert_str_eq(ar(OP_TRUEDIV, v_float(1), v_float(0)), "ZeroDivisionError: float division by zero");
  ck_assert_str_eq(ar(OP_FLOORDIV, v_float(1), v_int(0)),
                   "ZeroDivisionError: float floor division by zero");
  ck_assert_str_eq(ar(OP_MOD, v_float(1), v_float(0)), "ZeroDivisionError: float modulo");
  ck_assert_str_eq(ar(OP_POW, v_float(0.0), v_int(-1)),
                   "ZeroDivisionError: 0.0 cannot be raised to a negative power");
  ck_assert_str_eq(ar(OP_POW, v_float(-8.0), v_float(1.0 / 3)),
                   "ValueError: negative number cannot be raised to a fractional power");
  ck_assert_str_eq(ar(OP_POW, v_float(10.0), v_int(400)),
                   "OverflowError: (34, 'Numerical result out of range')");
  ck_assert_str_eq(ar(OP_POW, v_float(-8.0), v_int(3)), "-512.0");
  ck_assert_str_eq(ar(OP_POW, v_int(1), v_float(NAN)), "1.0");
  ck_assert_str_eq(ar(OP_POW, v_float(INFINITY), v_int(-1)), "0.0");
  ck_assert_str_eq(ar(OP_POW, v_float(-INFINITY), v_int(3)), "-inf");
  ck_assert_str_eq(ar(OP_POW, v_float(0.5), v_float(-INFINITY)), "inf");
  ck_assert_str_eq(ar(OP_POW, v_float(2.0), v_float(0.5)), "1.4142135623730951");
  ck_assert_str_eq(ar(OP_MUL, v_float(1e308), v_int(10)), "inf");
}
END_TEST

START_TEST(test_seq_arith) {
  ck_assert_str_eq(ar(OP_ADD, S("ab"), S("c\u00e9")), "'abc\u00e9'");
  Value s = arith(OP_ADD, S("ab"), S("c\u00e9"));
  ck_assert_int_eq(AS_STR(s)->nchars, 4);
  ck_assert(!AS_STR(s)->ascii);
  ck_assert_str_eq(ar(OP_MUL, S("ab"), v_int(3)), "'ababab'");
  ck_assert_str_eq(ar(OP_MUL, v_int(2), S("\u00e9")), "'\u00e9\u00e9'");
  ck_assert_int_eq(AS_STR(arith(OP_MUL, v_int(2), S("\u00e9")))->nchars, 2);
  ck_assert_str_eq(ar(OP_MUL, S("ab"), v_int(-1)), "''");
  ck_assert_str_eq(ar(OP_MUL, S("ab"), v_bool(true)), "'ab'");
  ck_assert_str_eq(ar(OP_ADD, lang_tuple_of(1, v_int(1)), lang_tuple_of(1, v_int(2))), "(1, 2)");
  ck_assert_str_eq(ar(OP_ADD, int_list(2), int_list(1)), "[0, 1, 0]");
  ck_assert_str_eq(ar(OP_MUL, int_list(2), v_int(2)), "[0, 1, 0, 1]");
  ck_assert_str_eq(ar(OP_MUL, v_int(2), lang_tuple_of(1, v_int(7))), "(7, 7)");
  ck_assert_str_eq(ar(OP_MUL, lang_tuple_of(1, v_int(7)), v_int(0)), "()");
  ck_assert_str_eq(arith_err(OP_ADD, v_int(1), S("a")),
                   "TypeError: unsupported operand type(s) for +: 'int' and 'str'");
  ck_assert_str_eq(arith_err(OP_ADD, S("a"), v_int(1)),
                   "TypeError: can only concatenate str (not \"int\") to str");
  ck_assert_str_eq(arith_err(OP_ADD, int_list(1), lang_tuple_of(0)),
                   "TypeError: can only concatenate list (not \"tuple\") to list");
  ck_assert_str_eq(arith_err(OP_ADD, lang_tuple_of(0), int_list(1)),
                   "TypeError: can only concatenate tuple (not \"list\") to tuple");
  ck_assert_str_eq(arith_err(OP_MUL, S("a"), v_float(1.5)),
                   "TypeError: can't multiply sequence by non-int of type 'float'");
  ck_assert_str_eq(arith_err(OP_MUL, int_list(1), int_list(1)),
                   "TypeError: can't multiply sequence by non-int of type 'list'");
  ck_assert_str_eq(arith_err(OP_MATMUL, v_int(1), v_int(2)),
                   "TypeError: unsupported operand type(s) for @: 'int' and 'int'");
  ck_assert_str_eq(arith_err(OP_SUB, S("a"), S("a")),
                   "TypeError: unsupported operand type(s) for -: 'str' and 'str'");
  ck_assert_str_eq(arith_err(OP_MUL, S("ab"), v_int(INT64_MAX)), "MemoryError: result too large");
  Value r;
  ck_assert(!lang_neg(vm, S("a"), &r));
  ck_assert_str_eq(err(), "TypeError: bad operand type for unary -: 'str'");
  ck_assert(!lang_pos(vm, v_none(), &r));
  ck_assert_str_eq(err(), "TypeError: bad operand type for unary +: 'NoneType'");
}
END_TEST

/* ---- comparison, equality, truth ---- */

START_TEST(test_compare) {
  ck_assert(cmp(CMP_LT, v_int(1), v_float(1.5)));
  ck_assert(cmp(CMP_EQ, v_int(1), v_float(1.0)));
  ck_assert(cmp(CMP_EQ, v_bool(true), v_int(1)));
  ck_assert(cmp(CMP_EQ, v_bool(true), v_float(1.0)));
  /* int/float comparisons are exact, as Python's */
  int64_t big = ((int64_t)1 << 53) + 1;
  ck_assert(!cmp(CMP_EQ, v_int(big), v_float((double)big)));
  ck_assert(cmp(CMP_GT, v_int(big), v_float((double)big)));
  ck_assert(cmp(CMP_LT, v_int(INT64_MAX), v_float(9223372036854775808.0)));
  ck_assert(cmp(CMP_GT, v_int(INT64_MIN), v_float(-1e300)));
  ck_assert(cmp(CMP_LT, v_int(-3), v_float(-2.5)));
  ck_assert(cmp(CMP_GT, v_int(-2), v_float(-2.5)));
  ck_assert(!cmp(CMP_LT, v_float(NAN), v_int(1)));
  ck_assert(!cmp(CMP_GE, v_float(NAN), v_float(NAN)));
  ck_assert(!cmp(CMP_EQ, v_float(NAN), v_float(NAN)));
  ck_assert(cmp(CMP_NE, v_float(NAN), v_float(NAN)));
  ck_assert(cmp(CMP_LT, S("abc"), S("abd")));
  ck_assert(cmp(CMP_LT, S("ab"), S("abc")));
  ck_assert(cmp(CMP_LT, S("z"), S("\u00e9")));
  ck_assert(cmp(CMP_LT, S("\uffff"), S("\U00010000")));
  ck_assert(cmp(CMP_LT, lang_tuple_of(2, v_int(1), v_int(2)), lang_tuple_of(2, v_int(1), v_int(3))));
  ck_assert(cmp(CMP_LT, lang_tuple_of(1, v_int(1)), lang_tuple_of(2, v_int(1), v_int(0))));
  ck_assert(cmp(CMP_GE, int_list(3), int_list(2)));
  ck_assert(cmp(CMP_LE, lang_tuple_of(2, v_int(1), S("a")), lang_tuple_of(2, v_float(1.0), S("a"))));
  ck_assert(!cmp(CMP_EQ, S("1"), v_int(1)));
  ck_assert(cmp(CMP_NE, v_none(), v_int(0)));
  ck_assert(!cmp(CMP_EQ, int_list(1), lang_tuple_of(1, v_int(0))));
  Value r;
  ck_assert(!lang_compare(vm, CMP_LT, S("a"), v_int(1), &r));
  ck_assert_str_eq(err(), "TypeError: '<' not supported between instances of 'str' and 'int'");
  ck_assert(!lang_compare(vm, CMP_GE, int_list(1), lang_tuple_of(0), &r));
  ck_assert_str_eq(err(), "TypeError: '>=' not supported between instances of 'list' and 'tuple'");
  ck_assert(!lang_compare(vm, CMP_LT, lang_tuple_of(1, v_int(1)), lang_tuple_of(1, S("a")), &r));
  ck_assert_str_eq(err(), "TypeError: '<' not supported between instances of 'int' and 'str'");
  ck_assert(!lang_compare(vm, CMP_LT, v_none(), v_none(), &r));
  ck_assert_str_eq(err(), "TypeError: '<' not supported between instances of 'NoneType' and 'NoneType'");
}
END_TEST

START_TEST(test_equal) {
  ObjDict *a = lang_dict_new(), *b = lang_dict_new();
  lang_dict_put(a, lang_str("x"), v_int(1));
  lang_dict_put(a, lang_str("y"), v_float(2.0));
  lang_dict_put(b, lang_str("y"), v_int(2));
  lang_dict_put(b, lang_str("x"), v_bool(true));
  ck_assert(lang_equal(v_obj(a), v_obj(b)));
  lang_dict_put(b, lang_str("x"), v_int(3));
  ck_assert(!lang_equal(v_obj(a), v_obj(b)));
  ck_assert(lang_equal(v_obj(lang_range_new(0, 0, 1)), v_obj(lang_range_new(5, 2, 3))));
  ck_assert(lang_equal(v_obj(lang_range_new(0, 3, 2)), v_obj(lang_range_new(0, 4, 2))));
  ck_assert(!lang_equal(v_obj(lang_range_new(0, 3, 1)), v_obj(lang_range_new(0, 3, 2))));
  ck_assert(lang_equal(lang_tuple_of(2, S("a"), int_list(2)), lang_tuple_of(2, S("a"), int_list(2))));
  ck_assert(!lang_equal(lang_tuple_of(0), list_of(0)));
  ck_assert(lang_equal(v_none(), v_none()));
  ck_assert(lang_equal(slice(1, NONE, 2), slice(1, NONE, 2)));
  Value f1 = v_obj(lang_builtin_new("f", NULL, 0, 0)), f2 = v_obj(lang_builtin_new("f", NULL, 0, 0));
  ck_assert(lang_equal(f1, f1));
  ck_assert(!lang_equal(f1, f2));
}
END_TEST

START_TEST(test_truthy) {
  struct { Value v; bool t; } cases[] = {
    {v_int(0), false}, {v_int(-1), true}, {v_float(0.0), false}, {v_float(-0.0), false},
    {v_float(NAN), true}, {S(""), false}, {S("0"), true}, {lang_tuple_of(0), false},
    {list_of(1, v_none()), true}, {list_of(0), false}, {v_obj(lang_dict_new()), false},
    {v_none(), false}, {v_bool(false), false}, {v_bool(true), true},
    {v_obj(lang_range_new(3, 3, 1)), false}, {v_obj(lang_range_new(0, 3, 1)), true},
    {v_obj(lang_builtin_new("f", NULL, 0, 0)), true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bool t;
    ck_assert(lang_truthy(vm, cases[i].v, &t));
    ck_assert_msg(t == cases[i].t, "truth of %s", repr(cases[i].v));
  }
}
END_TEST

/* ---- dicts and strings ---- */

START_TEST(test_dict) {
  ObjDict *d = lang_dict_new();
  const char *keys[] = {"b", "a", "c"};
  for (int i = 0; i < 3; i++) lang_dict_put(d, lang_str(keys[i]), v_int(i));
  ck_assert_str_eq(repr(v_obj(d)), "{'b': 0, 'a': 1, 'c': 2}");
  /* an update keeps the key's place; set copies, leaving the original */
  ObjDict *e = lang_dict_set(d, lang_str("a"), S("new"), true);
  ck_assert_str_eq(repr(v_obj(e)), "{'b': 0, 'a': 'new', 'c': 2}");
  ck_assert_str_eq(repr(v_obj(d)), "{'b': 0, 'a': 1, 'c': 2}");
  ObjDict *f = lang_dict_set(e, lang_str("z"), v_none(), true);
  ck_assert_str_eq(repr(v_obj(f)), "{'b': 0, 'a': 'new', 'c': 2, 'z': None}");
  ck_assert_int_eq(e->len, 3);
  ObjDict *g = lang_dict_del(f, lang_str("a"));
  ck_assert_str_eq(repr(v_obj(g)), "{'b': 0, 'c': 2, 'z': None}");
  ck_assert_ptr_null(lang_dict_del(f, lang_str("nope")));
  Value v;
  ck_assert(lang_dict_get(g, lang_str("z"), &v) && v.tag == V_NONE);
  ck_assert(!lang_dict_get(g, lang_str("a"), &v));
  /* large dicts go through the index */
  ObjDict *big = lang_dict_new();
  for (int i = 0; i < 1000; i++) lang_dict_put(big, lang_str_fmt("k%d", i), v_int(i));
  ck_assert_int_eq(big->len, 1000);
  ck_assert_ptr_nonnull(big->index);
  ck_assert_uint_ge(big->cap, 2000);
  for (int i = 0; i < 1000; i++) {
    ck_assert(lang_dict_get(big, lang_str_fmt("k%d", i), &v));
    ck_assert_int_eq(v.i, i);
  }
  ck_assert(!lang_dict_get(big, lang_str("k1000"), &v));
  ObjDict *big2 = lang_dict_set(big, lang_str("k500"), v_int(-1), true);
  ck_assert(lang_dict_get(big2, lang_str("k500"), &v) && v.i == -1);
  ck_assert(lang_dict_get(big, lang_str("k500"), &v) && v.i == 500);
  ck_assert_str_eq(big2->entries[500].key->data, "k500");
  ObjDict *big3 = lang_dict_del(big2, lang_str("k0"));
  ck_assert_int_eq(big3->len, 999);
  ck_assert_str_eq(big3->entries[0].key->data, "k1");
  ck_assert(!lang_dict_get(big3, lang_str("k0"), &v));
  ck_assert(lang_dict_get(big3, lang_str("k999"), &v) && v.i == 999);
  /* growth by functional updates, one key at a time */
  ObjDict *h = lang_dict_new();
  for (int i = 0; i < 40; i++) h = lang_dict_set(h, lang_str_fmt("%d", i), v_int(i), true);
  for (int i = 0; i < 40; i++) ck_assert(lang_dict_get(h, lang_str_fmt("%d", i), &v) && v.i == i);
  /* getitem, setitem, contains */
  ck_assert_str_eq(getitem(v_obj(d), S("c")), "2");
  ck_assert_str_eq(getitem(v_obj(d), S("k")), "KeyError: 'k'");
  ck_assert_str_eq(getitem(v_obj(d), v_int(1)), "KeyError: 1");
  ck_assert_str_eq(setitem(v_obj(d), S("b"), v_int(9)), "{'b': 9, 'a': 1, 'c': 2}");
  ck_assert_str_eq(setitem(v_obj(d), v_int(1), v_int(9)), "TypeError: dict keys must be str, not 'int'");
  bool in;
  ck_assert(lang_contains(vm, v_obj(d), S("a"), &in) && in);
  ck_assert(lang_contains(vm, v_obj(d), S("q"), &in) && !in);
  ck_assert(lang_contains(vm, v_obj(d), v_int(1), &in) && !in);
}
END_TEST

START_TEST(test_intern) {
  ObjStr *a = lang_intern(vm, "hello", 5);
  ObjStr *b = lang_intern(vm, "hello world", 5);
  ck_assert_ptr_eq(a, b);
  ck_assert_ptr_ne(a, lang_intern(vm, "hell", 4));
  for (int i = 0; i < 200; i++) {
    ObjStr *s = lang_str_fmt("name%d", i);
    ck_assert_ptr_eq(lang_intern(vm, s->data, s->len), lang_intern(vm, s->data, s->len));
  }
  ck_assert_ptr_eq(a, lang_intern(vm, "hello", 5));
  ck_assert(lang_str_eq(lang_str("x"), lang_str("x")));
  ck_assert_uint_eq(lang_str_hash(lang_str("abc")), lang_str_hash(lang_str("abc")));
}
END_TEST

START_TEST(test_utf8) {
  ObjStr *s = lang_str("h\u00e9llo \u2713\U0001F600!");
  ck_assert(!s->ascii);
  ck_assert_uint_eq(s->nchars, 9);
  ck_assert(lang_str("abc")->ascii);
  int64_t n;
  ck_assert(lang_len(vm, v_obj(s), &n) && n == 9);
  ck_assert_str_eq(getitem(v_obj(s), v_int(1)), "'\u00e9'");
  ck_assert_str_eq(getitem(v_obj(s), v_int(6)), "'\u2713'");
  ck_assert_str_eq(getitem(v_obj(s), v_int(-2)), "'\U0001F600'");
  ck_assert_str_eq(getitem(v_obj(s), v_int(-1)), "'!'");
  ck_assert_str_eq(getitem(v_obj(s), v_int(9)), "IndexError: string index out of range");
  ck_assert_str_eq(getitem(v_obj(s), v_int(-10)), "IndexError: string index out of range");
  ck_assert_str_eq(getitem(v_obj(s), slice(1, 4, NONE)), "'\u00e9ll'");
  ck_assert_str_eq(getitem(v_obj(s), slice(NONE, NONE, -1)), "'!\U0001F600\u2713 oll\u00e9h'");
  ck_assert_str_eq(getitem(S("abc"), v_bool(true)), "'b'");
  ck_assert_str_eq(getitem(S("abc"), S("x")), "TypeError: string indices must be integers, not 'str'");
  ck_assert_uint_eq(AS_STR(arith(OP_ADD, S("\u00e9"), S("")))->nchars, 1);
  /* validation */
  ck_assert(lang_utf8_valid("h\u00e9\U0001F600", strlen("h\u00e9\U0001F600")));
  ck_assert(!lang_utf8_valid("\xc3", 1));
  ck_assert(!lang_utf8_valid("\xc0\xaf", 2));         /* overlong */
  ck_assert(!lang_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
  ck_assert(!lang_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
  ck_assert(!lang_utf8_valid("\x80", 1));
  ck_assert(!lang_utf8_valid("a\xe2\x82", 3));
  char buf[4];
  uint32_t cp;
  ck_assert_uint_eq(lang_utf8_encode(0x1F600, buf), 4);
  ck_assert_uint_eq(lang_utf8_decode(buf, 4, &cp), 4);
  ck_assert_uint_eq(cp, 0x1F600);
  ck_assert_uint_eq(lang_str_offset(s, 2), 3);
  /* items of a str */
  ObjSeq *items;
  ck_assert(lang_iter_items(vm, S("a\u00e9"), &items));
  ck_assert_str_eq(repr(v_obj(items)), "['a', '\u00e9']");
}
END_TEST

/* ---- indexing, slicing, assignment ---- */

START_TEST(test_index) {
  Value l = int_list(3), t = lang_tuple_of(2, v_int(5), v_int(6));
  ck_assert_str_eq(getitem(l, v_int(-1)), "2");
  ck_assert_str_eq(getitem(l, v_int(3)), "IndexError: list index out of range");
  ck_assert_str_eq(getitem(l, v_int(-4)), "IndexError: list index out of range");
  ck_assert_str_eq(getitem(t, v_int(5)), "IndexError: tuple index out of range");
  ck_assert_str_eq(getitem(t, v_bool(false)), "5");
  ck_assert_str_eq(getitem(l, S("x")), "TypeError: list indices must be integers or slices, not str");
  ck_assert_str_eq(getitem(t, v_float(1.0)),
                   "TypeError: tuple indices must be integers or slices, not float");
  Value r = v_obj(lang_range_new(3, 30, 4));
  ck_assert_str_eq(getitem(r, v_int(2)), "11");
  ck_assert_str_eq(getitem(r, v_int(-1)), "27");
  ck_assert_str_eq(getitem(r, v_int(7)), "IndexError: range object index out of range");
  ck_assert_str_eq(getitem(r, v_int(-8)), "IndexError: range object index out of range");
  ck_assert_str_eq(getitem(r, S("x")), "TypeError: range indices must be integers or slices, not str");
  ck_assert_str_eq(getitem(v_none(), v_int(0)), "TypeError: 'NoneType' object is not subscriptable");
  ck_assert_str_eq(getitem(v_int(5), v_int(0)), "TypeError: 'int' object is not subscriptable");
  ck_assert_str_eq(getitem(l, slice(NONE, NONE, 0)), "ValueError: slice step cannot be zero");
  ck_assert_str_eq(getitem(l, lang_slice_new(S("a"), v_none(), v_none())),
                   "TypeError: slice indices must be integers or None or have an __index__ method");
  /* huge ranges */
  Value hr = v_obj(lang_range_new(INT64_MIN, INT64_MAX, 1));
  ck_assert_str_eq(getitem(hr, v_int(-1)), "9223372036854775806");
  ck_assert_str_eq(getitem(hr, v_int(INT64_MAX)), "-1");
  int64_t n;
  ck_assert(!lang_len(vm, hr, &n));
  ck_assert_str_eq(err(), "OverflowError: range too large");
  ck_assert_str_eq(getitem(v_obj(lang_range_new(0, 10, 1)), slice(NONE, NONE, -1)), "range(9, -1, -1)");
}
END_TEST

START_TEST(test_slice_table) {
  Value l = int_list(7), t, s = S("h\u00e9llo\U0001F600ab"), r = v_obj(lang_range_new(3, 30, 4));
  ObjSeq *tt = lang_tuple_new(7);
  for (int i = 0; i < 7; i++) tt->items[i] = v_int(i);
  t = v_obj(tt);
  for (size_t i = 0; i < sizeof slice_cases / sizeof slice_cases[0]; i++) {
    Value sl = slice(slice_cases[i].start, slice_cases[i].stop, slice_cases[i].step);
    Value out;
    ck_assert(lang_getitem(vm, l, sl, &out));
    ck_assert_msg(strcmp(repr(out), slice_cases[i].list) == 0, "list%s: %s != %s", repr(sl),
                  repr(out), slice_cases[i].list);
    ck_assert(lang_getitem(vm, t, sl, &out));
    const char *lr = slice_cases[i].list;
    /* the tuple result prints as the list's with () */
    ObjSeq *o = AS_SEQ(out);
    ck_assert_int_eq(out.o->kind, O_TUPLE);
    StrBuf sb;
    sb_init(&sb);
    sb_addc(&sb, '[');
    for (size_t k = 0; k < o->len; k++) sb_printf(&sb, "%s%lld", k ? ", " : "", (long long)o->items[k].i);
    sb_addc(&sb, ']');
    ck_assert_str_eq(sb.data, lr);
    ck_assert(lang_getitem(vm, s, sl, &out));
    ck_assert_msg(strcmp(AS_STR(out)->data, slice_cases[i].str) == 0, "str%s", repr(sl));
    ck_assert_uint_eq(AS_STR(out)->nchars, lang_str(slice_cases[i].str)->nchars);
    ck_assert(lang_getitem(vm, r, sl, &out));
    ck_assert_msg(strcmp(repr(out), slice_cases[i].range) == 0, "range%s: %s != %s", repr(sl),
                  repr(out), slice_cases[i].range);
  }
}
END_TEST

START_TEST(test_setitem) {
  Value l = int_list(4);
  ck_assert_str_eq(setitem(l, v_int(-1), S("x")), "[0, 1, 2, 'x']");
  ck_assert_str_eq(repr(l), "[0, 1, 2, 3]");
  ck_assert_str_eq(setitem(l, v_int(4), v_int(0)), "IndexError: list assignment index out of range");
  ck_assert_str_eq(setitem(l, S("a"), v_int(0)),
                   "TypeError: list indices must be integers or slices, not str");
  ck_assert_str_eq(setitem(l, slice(1, 3, NONE), lang_tuple_of(1, v_int(9))), "[0, 9, 3]");
  ck_assert_str_eq(setitem(l, slice(1, 1, NONE), list_of(2, v_int(7), v_int(8))), "[0, 7, 8, 1, 2, 3]");
  ck_assert_str_eq(setitem(l, slice(3, 1, NONE), int_list(1)), "[0, 1, 2, 0, 3]");
  ck_assert_str_eq(setitem(l, slice(NONE, NONE, NONE), S("ab")), "['a', 'b']");
  ck_assert_str_eq(setitem(l, slice(NONE, NONE, 2), int_list(2)), "[0, 1, 1, 3]");
  ck_assert_str_eq(setitem(l, slice(NONE, NONE, -1), int_list(4)), "[3, 2, 1, 0]");
  ck_assert_str_eq(setitem(l, slice(0, 3, 2), int_list(1)),
                   "ValueError: attempt to assign sequence of size 1 to extended slice of size 2");
  ck_assert_str_eq(setitem(l, slice(0, 1, NONE), v_int(5)), "TypeError: can only assign an iterable");
  ck_assert_str_eq(setitem(l, slice(0, 2, NONE), v_obj(lang_range_new(5, 8, 1))), "[5, 6, 7, 2, 3]");
  ck_assert_str_eq(setitem(lang_tuple_of(1, v_int(1)), v_int(0), v_int(2)),
                   "TypeError: 'tuple' object does not support item assignment");
  ck_assert_str_eq(setitem(S("a"), v_int(0), S("b")),
                   "TypeError: 'str' object does not support item assignment");
  ck_assert_str_eq(setitem(v_int(1), v_int(0), S("b")),
                   "TypeError: 'int' object does not support item assignment");
}
END_TEST

START_TEST(test_contains_len) {
  bool in;
  ck_assert(lang_contains(vm, S("hello"), S("ell"), &in) && in);
  ck_assert(lang_contains(vm, S("hello"), S(""), &in) && in);
  ck_assert(lang_contains(vm, S("hello"), S("elo"), &in) && !in);
  ck_assert(!lang_contains(vm, S("hello"), v_int(1), &in));
  ck_assert_str_eq(err(), "TypeError: 'in <string>' requires string as left operand, not int");
  ck_assert(lang_contains(vm, list_of(2, S("a"), v_float(2.0)), v_int(2), &in) && in);
  ck_assert(lang_contains(vm, lang_tuple_of(1, v_int(1)), S("1"), &in) && !in);
  Value r = v_obj(lang_range_new(10, 0, -3));   /* 10 7 4 1 */
  ck_assert(lang_contains(vm, r, v_int(4), &in) && in);
  ck_assert(lang_contains(vm, r, v_int(5), &in) && !in);
  ck_assert(lang_contains(vm, r, v_int(0), &in) && !in);
  ck_assert(lang_contains(vm, r, v_float(7.0), &in) && in);
  ck_assert(lang_contains(vm, r, v_float(7.5), &in) && !in);
  ck_assert(lang_contains(vm, v_obj(lang_range_new(INT64_MIN, INT64_MAX, 3)), v_int(INT64_MAX - 1), &in));
  ck_assert(lang_contains(vm, r, S("x"), &in) && !in);
  ck_assert(!lang_contains(vm, v_int(5), v_int(1), &in));
  ck_assert_str_eq(err(), "TypeError: argument of type 'int' is not iterable");
  int64_t n;
  ck_assert(lang_len(vm, v_obj(lang_range_new(0, 10, 3)), &n) && n == 4);
  ck_assert(lang_len(vm, v_obj(lang_range_new(0, -10, -3)), &n) && n == 4);
  ck_assert(lang_len(vm, v_obj(lang_range_new(0, 10, -1)), &n) && n == 0);
  ck_assert(lang_len(vm, int_list(5), &n) && n == 5);
  ck_assert(!lang_len(vm, v_int(5), &n));
  ck_assert_str_eq(err(), "TypeError: object of type 'int' has no len()");
}
END_TEST

/* ---- conversions ---- */

static const char *to_int(Value v) {
  Value r;
  if (!lang_to_int(vm, v, &r)) return err();
  return repr(r);
}

static const char *to_float(Value v) {
  Value r;
  if (!lang_to_float(vm, v, &r)) return err();
  return repr(r);
}

START_TEST(test_conversions) {
  ck_assert_str_eq(to_int(v_float(-2.9)), "-2");
  ck_assert_str_eq(to_int(v_float(2.9)), "2");
  ck_assert_str_eq(to_int(v_bool(true)), "1");
  ck_assert_str_eq(to_int(v_float(-9223372036854775808.0)), "-9223372036854775808");
  ck_assert_str_eq(to_int(v_float(9223372036854775808.0)), "OverflowError: integer overflow");
  ck_assert_str_eq(to_int(v_float(INFINITY)), "OverflowError: cannot convert float infinity to integer");
  ck_assert_str_eq(to_int(v_float(NAN)), "ValueError: cannot convert float NaN to integer");
  ck_assert_str_eq(to_int(S(" -12 ")), "-12");
  ck_assert_str_eq(to_int(S("+0")), "0");
  ck_assert_str_eq(to_int(S("007")), "7");
  ck_assert_str_eq(to_int(S("1_000")), "1000");
  ck_assert_str_eq(to_int(S("-9223372036854775808")), "-9223372036854775808");
  ck_assert_str_eq(to_int(S("9223372036854775808")), "OverflowError: integer overflow");
  ck_assert_str_eq(to_int(S("abc")), "ValueError: invalid literal for int() with base 10: 'abc'");
  ck_assert_str_eq(to_int(S(" x ")), "ValueError: invalid literal for int() with base 10: ' x '");
  ck_assert_str_eq(to_int(S("1__0")), "ValueError: invalid literal for int() with base 10: '1__0'");
  ck_assert_str_eq(to_int(S("_1")), "ValueError: invalid literal for int() with base 10: '_1'");
  ck_assert_str_eq(to_int(S("1_")), "ValueError: invalid literal for int() with base 10: '1_'");
  ck_assert_str_eq(to_int(S("")), "ValueError: invalid literal for int() with base 10: ''");
  ck_assert_str_eq(to_int(S("1.5")), "ValueError: invalid literal for int() with base 10: '1.5'");
  ck_assert_str_eq(to_int(v_none()),
                   "TypeError: int() argument must be a string, a bytes-like object or a real "
                   "number, not 'NoneType'");
  ck_assert_str_eq(to_float(S("inf")), "inf");
  ck_assert_str_eq(to_float(S("-Infinity")), "-inf");
  ck_assert_str_eq(to_float(S("nan")), "nan");
  ck_assert_str_eq(to_float(S("1e3")), "1000.0");
  ck_assert_str_eq(to_float(S(" 2.5 ")), "2.5");
  ck_assert_str_eq(to_float(S("1_000.5")), "1000.5");
  ck_assert_str_eq(to_float(S("1.")), "1.0");
  ck_assert_str_eq(to_float(S(".5")), "0.5");
  ck_assert_str_eq(to_float(S("-0")), "-0.0");
  ck_assert_str_eq(to_float(S("1e500")), "inf");
  ck_assert_str_eq(to_float(S("0.1")), "0.1");
  ck_assert_str_eq(to_float(S("x")), "ValueError: could not convert string to float: 'x'");
  ck_assert_str_eq(to_float(S(".")), "ValueError: could not convert string to float: '.'");
  ck_assert_str_eq(to_float(S("0x10")), "ValueError: could not convert string to float: '0x10'");
  ck_assert_str_eq(to_float(S("1__0")), "ValueError: could not convert string to float: '1__0'");
  ck_assert_str_eq(to_float(S("1e")), "ValueError: could not convert string to float: '1e'");
  ck_assert_str_eq(to_float(S("nan(1)")), "ValueError: could not convert string to float: 'nan(1)'");
  ck_assert_str_eq(to_float(v_int(3)), "3.0");
  ck_assert_str_eq(to_float(v_bool(false)), "0.0");
  ck_assert_str_eq(to_float(v_none()),
                   "TypeError: float() argument must be a string or a real number, not 'NoneType'");
}
END_TEST

/* ---- the VM: errors, files, output, tables, recursion ---- */

START_TEST(test_error_render) {
  int f = lang_file_add(vm, "prog.ms", "x = 1\n\tdef f(y):\n  return y + \"a\"\n", 35);
  ck_assert_int_eq(f, 0);
  size_t len;
  const char *line = lang_file_line(vm, f, 3, &len);
  ck_assert_ptr_nonnull(line);
  ck_assert_int_eq((int)len, 16);
  ck_assert_ptr_null(lang_file_line(vm, f, 9, &len));
  Span sp = {f, 3, 10, 7};
  ck_assert(!lang_raise_at(vm, sp, "TypeError", "unsupported operand type(s) for +: '%s' and '%s'",
                           "int", "str"));
  lang_trace_push(vm, (Span){f, 3, 10, 1}, "f");
  lang_trace_push(vm, (Span){f, 5, 1, 1}, "<module>");
  ck_assert_str_eq(lang_error_render(vm)->data,
                   "prog.ms:3:10: error: unsupported operand type(s) for +: 'int' and 'str'\n"
                   "      return y + \"a\"\n"
                   "             ^^^^^^^\n"
                   "Traceback (innermost last):\n"
                   "  prog.ms:5:1 in <module>\n"
                   "  prog.ms:3:10 in f\n");
  ck_assert_str_eq(vm->err.kind, "TypeError");
  /* tabs in the source line are copied into the caret line */
  lang_raise_at(vm, (Span){f, 2, 3, 0}, "SyntaxError", "bad");
  ck_assert_str_eq(lang_error_render(vm)->data,
                   "prog.ms:2:3: error: bad\n"
                   "    \tdef f(y):\n"
                   "    \t ^\n");
  /* columns count characters, not bytes */
  int g = lang_file_add(vm, "u.ms", "s = '\u00e9\u00e9' + 1\n", strlen("s = '\u00e9\u00e9' + 1\n"));
  lang_raise_at(vm, (Span){g, 1, 10, 1}, "TypeError", "boom");
  ck_assert_str_eq(lang_error_render(vm)->data,
                   "u.ms:1:10: error: boom\n"
                   "    s = '\u00e9\u00e9' + 1\n"
                   "             ^\n");
  lang_raise(vm, "ValueError", "no place %d", 7);
  ck_assert_str_eq(lang_error_render(vm)->data, "error: no place 7\n");
  ck_assert_int_eq(vm->err.span.file, -1);
  lang_error_clear(vm);
  ck_assert(!vm->err.set);
  ck_assert_int_eq(vm->err.ntrace, 0);
  /* many frames */
  lang_raise(vm, "RecursionError", "deep");
  for (int i = 0; i < 100; i++) lang_trace_push(vm, (Span){f, 1, 1, 1}, i == 99 ? "outer" : "inner");
  ck_assert_int_eq(vm->err.ntrace, 100);
  /* kept innermost first, as pushed while unwinding */
  ck_assert_str_eq(vm->err.trace[0].name, "inner");
  ck_assert_str_eq(vm->err.trace[99].name, "outer");
  /* a long message */
  char big[1000];
  memset(big, 'm', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  lang_raise(vm, "ValueError", "%s!", big);
  ck_assert_uint_eq(vm->err.message->len, 1000);
}
END_TEST

static StrBuf written;
static void capture(void *user, const char *text, size_t len) {
  ck_assert_ptr_eq(user, &written);
  sb_add(&written, text, len);
}

static bool fn_one(MistVM *v, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  *out = v_int(1);
  return true;
}

START_TEST(test_vm_misc) {
  sb_init(&written);
  vm->write = capture;
  vm->write_user = &written;
  lang_write(vm, "hi ", 3);
  lang_write(vm, "there", 5);
  ck_assert_str_eq(written.data, "hi there");
  lang_def_builtin(vm, "one", fn_one, 0, 0);
  lang_def_method(vm, "sum", fn_one, 1, 2);
  Value b;
  ck_assert(lang_dict_get(vm->builtins, lang_str("one"), &b));
  ck_assert(v_is_obj(b, O_BUILTIN));
  ck_assert_str_eq(AS_BUILTIN(b)->name, "one");
  ck_assert_int_eq(AS_BUILTIN(b)->prim, -1);
  ck_assert(lang_dict_get(vm->methods, lang_str("sum"), &b));
  ck_assert_int_eq(AS_BUILTIN(b)->max_args, 2);
  /* recursion guard */
  ck_assert(lang_check_stack(vm));
  vm->depth = vm->max_depth + 1;
  ck_assert(!lang_check_stack(vm));
  ck_assert_str_eq(err(), "RecursionError: maximum recursion depth exceeded");
  vm->depth = 0;
  lang_set_stack_budget(vm, 1 << 20);
  ck_assert(lang_check_stack(vm));
  vm->stack_limit = (char *)__builtin_frame_address(0) + 4096;
  ck_assert(!lang_check_stack(vm));
  lang_error_clear(vm);
  vm->stack_limit = NULL;
  ck_assert_str_eq(lang_type_name(v_float(1)), "float");
  ck_assert_str_eq(lang_type_name(v_obj(lang_dict_new())), "dict");
  ck_assert_str_eq(lang_type_name(v_none()), "NoneType");
  ck_assert_str_eq(lang_arith_symbol(OP_FLOORDIV), "//");
  ck_assert_str_eq(lang_cmp_symbol(CMP_LE), "<=");
}
END_TEST

START_TEST(test_strbuf) {
  StrBuf sb;
  sb_init(&sb);
  ck_assert_str_eq(sb.data, "");
  for (int i = 0; i < 1000; i++) sb_printf(&sb, "%d,", i);
  sb_adds(&sb, "end");
  sb_addc(&sb, '!');
  ck_assert_uint_eq(sb.len, strlen(sb.data));
  ck_assert(strncmp(sb.data, "0,1,2,", 6) == 0);
  ck_assert_str_eq(sb.data + sb.len - 4, "end!");
  char long_text[600];
  memset(long_text, 'q', 599);
  long_text[599] = '\0';
  StrBuf b2;
  sb_init(&b2);
  sb_printf(&b2, "<%s>", long_text);
  ck_assert_uint_eq(b2.len, 601);
  ObjStr *s = sb_to_str(&b2);
  ck_assert_uint_eq(s->len, 601);
  ck_assert_int_eq(s->data[600], '>');
  ck_assert_str_eq(lang_str_fmt("%s-%d", long_text, 5)->data + 599, "-5");
}
END_TEST

START_TEST(test_iter_items) {
  ObjSeq *items;
  ck_assert(lang_iter_items(vm, v_obj(lang_range_new(0, 5, 2)), &items));
  ck_assert_str_eq(repr(v_obj(items)), "[0, 2, 4]");
  ObjDict *d = lang_dict_new();
  lang_dict_put(d, lang_str("q"), v_int(1));
  ck_assert(lang_iter_items(vm, v_obj(d), &items));
  ck_assert_str_eq(repr(v_obj(items)), "['q']");
  ck_assert(!lang_iter_items(vm, v_float(1), &items));
  ck_assert_str_eq(err(), "TypeError: 'float' object is not iterable");
}
END_TEST

static Suite *lang_suite(void) {
  Suite *s = suite_create("lang");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_float_repr);
  tcase_add_test(tc, test_scalar_repr);
  tcase_add_test(tc, test_str_repr);
  tcase_add_test(tc, test_container_repr);
  tcase_add_test(tc, test_format_table);
  tcase_add_test(tc, test_format_misc);
  tcase_add_test(tc, test_int_arith);
  tcase_add_test(tc, test_float_arith);
  tcase_add_test(tc, test_seq_arith);
  tcase_add_test(tc, test_compare);
  tcase_add_test(tc, test_equal);
  tcase_add_test(tc, test_truthy);
  tcase_add_test(tc, test_dict);
  tcase_add_test(tc, test_intern);
  tcase_add_test(tc, test_utf8);
  tcase_add_test(tc, test_index);
  tcase_add_test(tc, test_slice_table);
  tcase_add_test(tc, test_setitem);
  tcase_add_test(tc, test_contains_len);
  tcase_add_test(tc, test_conversions);
  tcase_add_test(tc, test_error_render);
  tcase_add_test(tc, test_vm_misc);
  tcase_add_test(tc, test_strbuf);
  tcase_add_test(tc, test_iter_items);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  lang_gc_init();
  SRunner *sr = srunner_create(lang_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed != 0;
}
