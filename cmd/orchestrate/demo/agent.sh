#!/bin/sh
# The demo's scripted agent: no LLM, no network. orchestrate run sends the
# prompt on stdin (and resumes it with --resume); the agent counts its
# attempts in .agent-attempts and makes a canned edit for each:
#   add: a wrong guess on attempt 1, the right fix from attempt 2 on;
#   mul: the same wrong change every time, so the same failure comes back.
lines=$(wc -l | tr -d " ")
n=$(( $(cat .agent-attempts 2>/dev/null || echo 0) + 1 ))
echo "$n" > .agent-attempts
echo "agent.sh${1:+ $1}: attempt $n, read a prompt of $lines lines"

if [ "$n" -eq 1 ]; then
	add='$(($1 * $2))'
	echo "add(): the minus looked wrong; tried a multiplication."
else
	add='$(($1 + $2))'
	echo "add(): it adds now."
fi
mul='$(($1 * $2 + 1))'
echo "mul(): multiplied, plus one for good measure (the same change as always)."

cat > calc.sh <<SCRIPT
#!/bin/sh
# calc: a tiny calculator, as the demo's agent left it (attempt $n).

add() { echo $add; }
mul() { echo $mul; }

"\$@"
SCRIPT
