#!/usr/bin/env bash
# plot_render.sh MIST: plot.lines writes SVG that a real renderer
# (rsvg-convert, Debian's librsvg2-bin) turns into an image of the
# chart's size, for a chart with every part (title, labels, legend, a
# gap for nan, a lone point) and for the smallest charts.
set -uo pipefail
mist=$1
if ! command -v rsvg-convert >/dev/null; then
  echo "FAIL: rsvg-convert is missing (make deps installs librsvg2-bin)"
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mist-plot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$mist" -e "
import plot
nan = float('nan')
plot.lines('$tmp/full.svg', {'train loss': [0.9, 0.5, nan, 0.31, 0.3], 'test accuracy': [0.8, 0.85, 0.87, 0.88, 0.89], 'lone': [nan, 0.6, nan]},
           title='Fashion-MNIST <MLP> & co', xlabel='epoch', ylabel='value')
plot.lines('$tmp/one.svg', {'x': [1.0]})
plot.lines('$tmp/flat.svg', {'c': [2.0, 2.0, 2.0]}, title='flat')
plot.lines('$tmp/none.svg', {})
plot.lines('$tmp/big.svg', {'steps': [i * i * 1000.0 for i in range(200)]}, ylabel='loss')
" || { echo "FAIL: mist failed"; exit 1; }
fail=0
for f in full one flat none big; do
  if ! rsvg-convert -o "$tmp/$f.png" "$tmp/$f.svg" 2> "$tmp/err"; then
    echo "FAIL: rsvg-convert rejected $f.svg: $(head -1 "$tmp/err")"
    fail=1
    continue
  fi
  # the PNG's width and height, from its IHDR chunk
  size=$(od -An -tu1 -j16 -N8 "$tmp/$f.png" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }')
  if [ "$size" != "720x440" ]; then
    echo "FAIL: $f.png is $size, not 720x440"
    fail=1
  fi
done
for want in 'Fashion-MNIST &lt;MLP&gt; &amp; co' '>train loss<' '>test accuracy<' '>epoch<' '>value<' '<polyline' '<circle'; do
  grep -qF -- "$want" "$tmp/full.svg" || { echo "FAIL: full.svg lacks $want"; fail=1; }
done
# the nan splits train loss into two lines, and lone is a dot
n=$(grep -c '<polyline' "$tmp/full.svg")
[ "$n" = 3 ] || { echo "FAIL: full.svg has $n lines, expected 3"; fail=1; }
[ $fail = 0 ] && echo "ok"
exit $fail
