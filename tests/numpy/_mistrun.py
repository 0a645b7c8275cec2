"""_mistrun.py: what the NumPy comparisons share (a module, not a test):
run a generated Mist program whose cases each end by printing "----",
and compare each case's output with the text NumPy gave for it (or hold
it to NumPy's values by a test's own rule)."""
import os
import subprocess
import tempfile


def run_program(mist, program):
    """Run the program's lines with mist: the finished process (stdout,
    stderr and returncode as text)."""
    with tempfile.NamedTemporaryFile("w", suffix=".ms", delete=False) as f:
        f.write("\n".join(program) + "\n")
        path = f.name
    try:
        return subprocess.run([mist, path], capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(path)


def compare(mist, program, want, labels, what, agree=None):
    """Run the program's lines with mist; want[i] is case i's expected
    output (or what agree(output, want[i]) holds its output to, when
    given), labels[i] how to name it in a report.  Prints a summary
    ("N of M WHAT") and the first differences (SHOW of them, default 5);
    returns 0 or 1."""
    run = run_program(mist, program)
    if run.returncode != 0:
        print("mist failed:", run.stderr[:3000])
        return 1
    got = run.stdout.split("----\n")[:-1]
    bad = 0
    for i, (w, g) in enumerate(zip(want, got)):
        if not (agree(g, w) if agree else g == w):
            bad += 1
            if bad <= int(os.environ.get("SHOW", 5)):
                shown = w if isinstance(w, str) else "%s\n" % (w,)
                print("case %d differs: %s\n--- numpy:\n%s--- mist:\n%s" % (i, labels[i], shown, g))
    if len(got) != len(want):
        print("expected %d results, got %d" % (len(want), len(got)))
        return 1
    print("%d of %d %s" % (len(want) - bad, len(want), what))
    return 1 if bad else 0
