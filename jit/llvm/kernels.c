/* kernels.c: Mist's own f32 exp, log, tanh and sigmoid (devices/cpu/
 * vmathf.c for 16 lanes, vmathf256.c for 8) linked into the modules
 * whose fused loops call them, so that LLVM inlines them into the loop
 * (docs/jit.md, "Fused elementwise loops").
 *
 * Called, each vector pays for a call and for loading every constant
 * again, and one call's work hardly overlaps the next's: exp(x) * y +
 * tanh(x) on 8 lanes, in a C loop, ran 1.18x as fast with both inlined,
 * and the fused loop's time against C (bench/jit_tensor_run.sh) went
 * from 1.31x to 1.15x.  So the build compiles the two files to
 * LLVM bitcode with clang (jit/llvm/CMakeLists.txt: -O2, no FMA
 * contraction), which libmist_jit.so holds; a module that declares
 * mist_vec256_exp_f32 and friends (fuse.c) gets the bitcode's function
 * of that name linked in, internal and always inlined.  The function
 * is built from the same C, every step an IEEE operation or an exact
 * one that LLVM keeps as it is (no fast-math flags anywhere), so it
 * gives the bits of the one eager mode calls (bench/vmath_llvm_bits_run.sh
 * compares the two builds over every argument; tests/jit/avx2_bits.sh
 * and tests/scripts/jit/fused_bits.ms compare graph mode with eager
 * mode in every test run).  The other vector functions (libmvec's)
 * stay calls. */
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#include "jit/llvm/cg.h"

/* the bitcode files, in .rodata (KERNELS_DIR: the build's jit/llvm) */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".hidden jit_vmathf16_bc, jit_vmathf16_bc_end, jit_vmathf8_bc, jit_vmathf8_bc_end\n"
        "jit_vmathf16_bc:\n"
        ".incbin \"" KERNELS_DIR "/vmathf.bc\"\n"
        "jit_vmathf16_bc_end:\n"
        ".balign 16\n"
        "jit_vmathf8_bc:\n"
        ".incbin \"" KERNELS_DIR "/vmathf256.bc\"\n"
        "jit_vmathf8_bc_end:\n"
        ".previous\n");
extern const char jit_vmathf16_bc[], jit_vmathf16_bc_end[], jit_vmathf8_bc[], jit_vmathf8_bc_end[];

/* The names fuse.c declares, and the bitcode's function for each. */
static const struct {
  const char *decl, *def;
} kernels[2][4] = {
    {{"mist_vec_exp_f32", "dev_vec_expf16"},
     {"mist_vec_log_f32", "dev_vec_logf16"},
     {"mist_vec_tanh_f32", "dev_vec_tanhf16"},
     {"mist_vec_sigmoid_f32", "dev_vec_sigmoidf16"}},
    {{"mist_vec256_exp_f32", "dev_vec_expf8"},
     {"mist_vec256_log_f32", "dev_vec_logf8"},
     {"mist_vec256_tanh_f32", "dev_vec_tanhf8"},
     {"mist_vec256_sigmoid_f32", "dev_vec_sigmoidf8"}}};

/* The declaration of name in mod that a definition may fill, or NULL. */
static LLVMValueRef declared(LLVMModuleRef mod, const char *name) {
  LLVMValueRef f = LLVMGetNamedFunction(mod, name);
  return f && LLVMIsDeclaration(f) ? f : NULL;
}

bool jit_link_kernels(LLVMModuleRef mod, const char **why) {
  const char *start[2] = {jit_vmathf16_bc, jit_vmathf8_bc}, *end[2] = {jit_vmathf16_bc_end, jit_vmathf8_bc_end};
  for (int w = 0; w < 2; w++) {
    bool any = false;
    for (int i = 0; i < 4; i++) any |= declared(mod, kernels[w][i].decl) != NULL;
    if (!any) continue;
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRange(start[w], (size_t)(end[w] - start[w]), "vmathf", false);
    /* read lazily: only the functions kept are ever parsed (the module
     * owns buf once it is read) */
    LLVMModuleRef km = NULL;
    if (LLVMGetBitcodeModuleInContext2(ctx, buf, &km)) {
      LLVMDisposeMemoryBuffer(buf);
      *why = "the vector math kernels' bitcode cannot be read";
      return false;
    }
    /* keep the functions wanted, renamed to what mod calls; drop the
     * rest (the array loops, the other functions), which nothing in
     * the bitcode calls (clang inlined its static helpers) */
    for (LLVMValueRef f = LLVMGetFirstFunction(km), next; f; f = next) {
      next = LLVMGetNextFunction(f);
      if (LLVMIsDeclaration(f)) continue;
      size_t n;
      const char *name = LLVMGetValueName2(f, &n);
      const char *as = NULL;
      for (int i = 0; i < 4 && !as; i++)
        if (strcmp(name, kernels[w][i].def) == 0 && declared(mod, kernels[w][i].decl)) as = kernels[w][i].decl;
      if (!as) {
        LLVMDeleteFunction(f);
        continue;
      }
      LLVMSetValueName2(f, as, strlen(as));
    }
    LLVMSetTarget(km, LLVMGetTarget(mod));
    LLVMSetDataLayout(km, LLVMGetDataLayoutStr(mod));
    if (LLVMLinkModules2(mod, km)) {   /* (km is consumed either way) */
      *why = "the vector math kernels cannot be linked";
      return false;
    }
    unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", strlen("alwaysinline"));
    for (int i = 0; i < 4; i++) {
      LLVMValueRef f = LLVMGetNamedFunction(mod, kernels[w][i].decl);
      if (!f || LLVMIsDeclaration(f)) continue;
      LLVMSetLinkage(f, LLVMInternalLinkage);
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
    }
  }
  return true;
}
