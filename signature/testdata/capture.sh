# capture.sh: what gen2.sh, gen3.sh and gen4.sh share (sourced, with $out set to
# corpus/): a scratch directory per run, removed at the end, and a capture
# of a command's output with its exit code, directory and home in
# corpus/runs.tsv.

dirs=()
cleanup() { rm -rf "${dirs[@]}"; }
trap cleanup EXIT

# newdir N: a new scratch directory, under /tmp for odd N and under $HOME
# for even N, so that pairs see both.
newdir() {
	local d
	if (($1 % 2)); then d=$(mktemp -d /tmp/sigcorpus.XXXXXX); else d=$(mktemp -d "$HOME/sigcorpus.XXXXXX"); fi
	dirs+=("$d")
	echo "$d"
}

# capture NAME DIR CMD: CMD's output in DIR as corpus/NAME.txt.
capture() {
	local name=$1 dir=$2 cmd=$3 rc
	(cd "$dir" && sh -c "$cmd") >"$out/$name.txt" 2>&1
	rc=$?
	printf '%s\t%d\t%s\t%s\n' "$name" "$rc" "$dir" "$HOME" >>"$out/runs.tsv"
	echo "$name: exit $rc" >&2
}
