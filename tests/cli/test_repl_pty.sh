#!/usr/bin/env bash
# tests/cli/test_repl_pty.sh MIST: the REPL on a pseudo-terminal, as a
# user meets it: an error (syntax, runtime, a bad command, :llvm and :ir
# misused, :load of a broken file) is reported and the session goes on
# with what it had defined; exit(n) leaves with n's low byte as status.
# Driven by python3's pty module (skipped, 77, without python3).
set -u
mist=$1
command -v python3 > /dev/null || { echo "python3 is not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'def broken(x):\n    return x +\n' > "$dir/broken.ms"
printf 'def loaded(x):\n    return x * 10\n' > "$dir/good.ms"
HOME=$dir exec python3 - "$mist" "$dir" <<'PY'
import os, pty, select, sys, time
mist, d = sys.argv[1], sys.argv[2]
lines = [
    "def f(x):", "    return x * 2", "",
    "f(", "21)",                      # an entry over two lines
    "1 / 0",                          # a runtime error
    "x = = 1",                        # a syntax error
    ":nonsense", ":llvm", ":llvm f f33", ":llvm nope int", ":ir", ":ir nope",
    ":load " + d + "/broken.ms", ":load " + d + "/nowhere.ms",
    ":load " + d + "/good.ms",
    "print(f(1) + loaded(1), 'alive')",
    "exit(-1)",
]
pid, fd = pty.fork()
if pid == 0:
    os.execv(mist, [mist])
out = b""
def read_until(pattern, timeout=30):
    global out
    end = time.time() + timeout
    while pattern not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            out += data
read_until(b">>> ")
for line in lines:
    os.write(fd, line.encode() + b"\r")
    read_until(b"... " if line.endswith(":") or line == "f(" or line.startswith("    ") else b">>> ")
read_until(b"\0", 5)   # to the end: exit(-1) leaves
status = None
for _ in range(100):
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = st
        break
    time.sleep(0.1)
if status is None:   # still there: exit(-1) did not leave
    os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
text = out.decode("utf-8", "replace").replace("\r\n", "\n")
want = [
    "\n42\n",
    "<stdin>:1:1: error: division by zero",
    "<stdin>:1:5: error: invalid syntax",
    "unknown command ':nonsense'",
    "usage: :llvm NAME ARGTYPES...",
    "bad argument type 'f33'",
    "error: no function named 'nope'",
    "usage: :ir NAME",
    "broken.ms:2:15: error: invalid syntax",
    "can't open file '" + d + "/nowhere.ms': No such file or directory",
    "12 alive",
]
fails = [w for w in want if w not in text]
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
if code != 255:
    fails.append("exit status %d, not 255" % code)
if fails:
    print("FAIL repl-pty: missing %s in:\n%s" % (fails, text))
    sys.exit(1)
print("repl pty: all passed")
PY
