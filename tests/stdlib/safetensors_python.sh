#!/usr/bin/env bash
# safetensors_python.sh MIST: a checkpoint io.save writes reads back in
# Python with only the standard library (read_safetensors.py).
set -uo pipefail
mist=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mist-st.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$mist" -e "
import io
io.save('$tmp/ck.safetensors', {'params': [{'w': tensor([[1.0, 2.0], [3.0, 4.0]]), 'b': tensor([0.5], dtype='f64')}],
                                 'opt': {'step': 12, 'm': (tensor([-1, 2], dtype='i32'), tensor([True, False]))},
                                 'lr': 0.001, 'big': tensor([2 ** 40])})
" || { echo "FAIL: mist failed"; exit 1; }
got=$(python3 "$here/read_safetensors.py" "$tmp/ck.safetensors" 2>&1)
want="params.0.w F32 [2, 2] [1.0, 2.0, 3.0, 4.0]
params.0.b F64 [1] [0.5]
opt.step I64 [] [12]
opt.m.0 I32 [2] [-1, 2]
opt.m.1 BOOL [2] [True, False]
lr F64 [] [0.001]
big I64 [1] [1099511627776]
metadata ['format', 'mist.tree']"
if [ "$got" != "$want" ]; then
  echo "FAIL: Python read back:"
  echo "$got"
  echo "expected:"
  echo "$want"
  exit 1
fi
echo ok
