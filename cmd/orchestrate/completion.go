package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate/prompts"
)

var completionCmd = &command{
	name:    "completion",
	summary: "print a shell completion script (bash, zsh or fish)",
	usage: `Usage: orchestrate completion bash|zsh|fish

Prints a script that completes orchestrate's commands, their subcommands
(issue add, session start, …), the prompt names and the flags of each
command; file names where a command takes a file. Load it:

  bash  source <(orchestrate completion bash)        (in ~/.bashrc), or
        orchestrate completion bash > /etc/bash_completion.d/orchestrate
  zsh   source <(orchestrate completion zsh)         (in ~/.zshrc, after compinit)
  fish  orchestrate completion fish > ~/.config/fish/completions/orchestrate.fish

The zsh script uses zsh's bash completion emulation (bashcompinit).

Exit codes: 0 printed, 2 usage (no shell, or one not listed).
`,
	run: runCompletion,
}

func runCompletion(e *env, args []string) error {
	pos, err := e.parse(e.flags("completion"), args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("completion", "completion takes one shell: bash, zsh or fish")
	}
	var script string
	switch pos[0] {
	case "bash":
		script = bashCompletion(completionSpec())
	case "zsh":
		script = zshCompletion(completionSpec())
	case "fish":
		script = fishCompletion(completionSpec())
	default:
		return usageError("completion", "completion: unknown shell %q: bash, zsh or fish", pos[0])
	}
	_, err = fmt.Fprint(e.stdout, script)
	return err
}

// globalFlags are the flags taken before the command.
var globalFlags = []string{"--dir", "--json", "--help", "--version"}

// subcommands are the words that may follow a command, where it takes one of
// a fixed set (a test checks them against each command's usage).
var subcommands = map[string][]string{
	"issue":      {"add", "show", "set", "retry", "skip", "resolve"},
	"session":    {"start", "show"},
	"hook":       {"session-start", "stop"},
	"completion": {"bash", "zsh", "fish"},
}

// compCommand is what the scripts complete for one command.
type compCommand struct {
	name, summary string
	words         []string // subcommands, or the names it takes
	flags         []string // --flag, sorted
}

var usageCommand = regexp.MustCompile(`\borchestrate ([a-z]+)`)

var usageFlag = regexp.MustCompile(`(?:^|[\s\[(|,])(--[a-z][a-z0-9-]*)`)

// completionSpec lists every registered command with its flags, read from
// its usage text, so that a flag documented there is completed too.
func completionSpec() []compCommand {
	var out []compCommand
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := lookup(name)
		flags := []string{"--dir", "--help", "--json"}
		for _, line := range strings.Split(c.usage, "\n") {
			if m := usageCommand.FindStringSubmatch(line); m != nil && m[1] != c.name {
				continue // an example of another command, with its flags
			}
			for _, m := range usageFlag.FindAllStringSubmatch(line, -1) {
				if m[1] != "--version" || c.name != "version" {
					flags = append(flags, m[1])
				}
			}
		}
		slices.Sort(flags)
		cc := compCommand{name: c.name, summary: c.summary, flags: slices.Compact(flags), words: subcommands[c.name]}
		switch c.name {
		case "help":
			cc.words = names
		case "prompt":
			for _, p := range prompts.Names() {
				cc.words = append(cc.words, strings.TrimSuffix(p, ".md"))
			}
		}
		out = append(out, cc)
	}
	return out
}

func bashCompletion(spec []compCommand) string {
	var names, subs, flags strings.Builder
	for _, c := range spec {
		names.WriteString(" " + c.name)
		if len(c.words) > 0 {
			fmt.Fprintf(&subs, "        %s) words=%q ;;\n", c.name, strings.Join(c.words, " "))
		}
		fmt.Fprintf(&flags, "        %s) words=%q ;;\n", c.name, strings.Join(c.flags, " "))
	}
	return fmt.Sprintf(`# bash completion for orchestrate (orchestrate completion bash)
_orchestrate() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local i w cmd="" sub="" words=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        case "$w" in
        --dir) ((i++)) ;;
        -*) ;;
        *) if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi ;;
        esac
    done
    if [[ $prev == --dir ]]; then
        COMPREPLY=($(compgen -d -- "$cur"))
        return
    fi
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then words=%q; else words=%q; fi
    elif [[ $cur == -* ]]; then
        case "$cmd" in
%s        esac
    elif [[ -z $sub ]]; then
        case "$cmd" in
%s        *) return ;;
        esac
    else
        return
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -o bashdefault -F _orchestrate orchestrate
`, strings.Join(globalFlags, " "), strings.TrimSpace(names.String()), flags.String(), subs.String())
}

func zshCompletion(spec []compCommand) string {
	return `#compdef orchestrate
# zsh completion for orchestrate (orchestrate completion zsh), through zsh's
# emulation of bash completion.
autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }
autoload -U +X bashcompinit && bashcompinit
` + bashCompletion(spec)
}

func fishCompletion(spec []compCommand) string {
	var b strings.Builder
	b.WriteString(`# fish completion for orchestrate (orchestrate completion fish)

# The words typed so far after orchestrate, without flags and --dir's value.
function __orchestrate_words
    set -l toks (commandline -opc)
    set -e toks[1]
    set -l skip 0
    for t in $toks
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case --dir
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end
function __orchestrate_need_command
    test (count (__orchestrate_words)) -eq 0
end
function __orchestrate_command_is
    set -l w (__orchestrate_words)
    test (count $w) -ge 1; and test $w[1] = $argv[1]
end
function __orchestrate_need_word
    set -l w (__orchestrate_words)
    test (count $w) -eq 1; and test $w[1] = $argv[1]
end

`)
	for _, f := range globalFlags {
		fmt.Fprintf(&b, "complete -c orchestrate -n __orchestrate_need_command -l %s\n", f[2:])
	}
	for _, c := range spec {
		fmt.Fprintf(&b, "complete -c orchestrate -n __orchestrate_need_command -f -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range spec {
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "complete -c orchestrate -n '__orchestrate_need_word %s' -f -a %s\n", c.name, fishQuote(strings.Join(c.words, " ")))
		}
		for _, f := range c.flags {
			fmt.Fprintf(&b, "complete -c orchestrate -n '__orchestrate_command_is %s' -l %s\n", c.name, f[2:])
		}
	}
	return b.String()
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
