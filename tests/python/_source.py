"""_source.py: what the CPython comparisons share (a module, not a test):
run a command on a program's source written to a temporary .ms file."""
import os
import subprocess
import tempfile


def run_source(cmd, src, env=None):
    """cmd with the path of a file holding src, with env added to the
    environment: the finished process (stdout, stderr and returncode as
    text)."""
    with tempfile.NamedTemporaryFile("w", suffix=".ms", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        return subprocess.run(cmd + [path], capture_output=True, text=True, timeout=600,
                              env=dict(os.environ, **env) if env else None)
    finally:
        os.unlink(path)


def output_of(cmd, src, env=None):
    """What cmd printed on src: its stdout, then its stderr and a
    non-zero exit status, marked."""
    p = run_source(cmd, src, env)
    return p.stdout + (p.stderr and "--- stderr:\n" + p.stderr) + ("" if p.returncode == 0 else "--- exit %d\n" % p.returncode)


# Graph mode without the compile cache, for programs whose top-level
# functions call each other: the serials a function's lowering takes
# depend on what inference has cached in the process (a callee inferred
# before or not), so MIST_JIT_CACHE_CHECK, which ctest sets, fails a hit
# on an entry that another program of the run stored ("its tables
# differ"), a known bug of the compile cache's check, not of the code.
NO_CACHE = {"MIST_JIT_CACHE": "0"}
