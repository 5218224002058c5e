#!/usr/bin/env bash
# screenshot.sh renders tollgate's HTML report in headless Chromium and
# saves a PNG, to look at the report the way a browser shows it.
#
#   scripts/screenshot.sh [OUTDIR]      (default /tmp)
#
# It builds tollgate, runs `tollgate probe` against the embedded simulator
# for a results file (falling back to the renderer's sample results when the
# probe cannot run), renders OUTDIR/tollgate-report.html and screenshots it
# to OUTDIR/tollgate-report.png. Chromium is Debian's `chromium` package;
# the script installs it with apt-get when it is missing and it can.
set -euo pipefail

out=${1:-/tmp}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "building tollgate" >&2
(cd "$root" && go build -o "$work/tollgate" .)

results=$work/results.json
# Exit 1 is a failed gate, which still wrote its results.
set +e
"$work/tollgate" probe -q -o "$results" >"$work/probe.out" 2>&1
code=$?
set -e
if [[ ($code -eq 0 || $code -eq 1) && -s $results ]]; then
	echo "results from tollgate probe against the embedded simulator" >&2
else
	echo "tollgate probe exited $code; using the renderer's sample results instead:" >&2
	tail -n 5 "$work/probe.out" >&2 || true
	cp "$root/report/render/testdata/sample.results.json" "$results"
fi

html=$out/tollgate-report.html
png=$out/tollgate-report.png
"$work/tollgate" report "$results" --format html -o "$html"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "installing chromium" >&2
		apt-get update -q >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2
		chromium=$(command -v chromium)
	else
		echo "chromium is not installed: apt-get install chromium" >&2
		exit 1
	fi
fi

# --no-sandbox: Chromium refuses to run as root with its sandbox (containers).
# --user-data-dir: a throwaway profile, so nothing of the user's is touched.
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$work/profile" --window-size=1280,2400 \
	--screenshot="$png" "file://$html" >"$work/chromium.out" 2>&1 || {
	cat "$work/chromium.out" >&2
	exit 1
}
echo "$png"
