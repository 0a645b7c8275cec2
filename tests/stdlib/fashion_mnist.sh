#!/usr/bin/env bash
# fashion_mnist.sh MIST: the flagship example, briefly: one epoch of the
# MLP on 3000 examples, then --resume for a second; each epoch's line,
# the checkpoint (read back by Python's standard library) and the curves.
set -uo pipefail
mist=$1
here=$(cd "$(dirname "$0")" && pwd)
example=$(dirname "$(dirname "$here")")/examples/fashion_mnist.ms
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "FAIL: the Fashion-MNIST files are missing (make deps installs dataset-fashion-mnist)"
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mist-fm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
"$mist" "$example" --epochs 1 --limit 3000 --batch 100 --out "$tmp/out" > "$tmp/1.out" 2> "$tmp/1.err" || { echo "FAIL: first run"; cat "$tmp/1.err"; exit 1; }
"$mist" "$example" --epochs 2 --limit 3000 --batch 100 --out "$tmp/out" --resume > "$tmp/2.out" 2> "$tmp/2.err" || { echo "FAIL: resumed run"; cat "$tmp/2.err"; exit 1; }
grep -qE '^epoch 1: train loss [0-9]\.[0-9]{4}, test accuracy 0\.[0-9]{4}, [0-9]+\.[0-9] s$' "$tmp/1.out" || { echo "FAIL: no epoch 1 line"; cat "$tmp/1.out"; fail=1; }
grep -q "^resuming after epoch 1 from $tmp/out/checkpoint.safetensors$" "$tmp/2.out" || { echo "FAIL: no resume line"; cat "$tmp/2.out"; fail=1; }
grep -qE '^epoch 2: train loss [0-9]\.[0-9]{4}, test accuracy 0\.[0-9]{4}, [0-9]+\.[0-9] s$' "$tmp/2.out" || { echo "FAIL: no epoch 2 line"; cat "$tmp/2.out"; fail=1; }
grep -q 'epoch 2: 100%' "$tmp/2.err" || { echo "FAIL: no progress bar"; cat "$tmp/2.err"; fail=1; }
# accuracy on 3000 images after 2 epochs: well above chance
acc=$(sed -n 's/^epoch 2: .*test accuracy \(0\.[0-9]*\).*/\1/p' "$tmp/2.out")
awk -v a="$acc" 'BEGIN { exit !(a > 0.6) }' || { echo "FAIL: accuracy $acc after 2 epochs"; fail=1; }
[ -s "$tmp/out/curves.svg" ] || { echo "FAIL: no curves.svg"; fail=1; }
python3 "$here/read_safetensors.py" "$tmp/out/checkpoint.safetensors" > "$tmp/ck.txt" || { echo "FAIL: Python cannot read the checkpoint"; fail=1; }
grep -q '^epoch I64 \[\] \[2\]$' "$tmp/ck.txt" || { echo "FAIL: checkpoint epoch"; cat "$tmp/ck.txt" | cut -c1-100; fail=1; }
grep -q '^params.l1.w F32 \[784, 256\]' "$tmp/ck.txt" || { echo "FAIL: checkpoint params"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
