package clientcmd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"

	"github.com/sharenote/sharenote/libs/cli"
)

// Completion is the completion command of a program. Its scripts are static (the shell
// never runs the program while completing) and are written from the program's own help
// (read through cli.Env.Main), so that every command and flag, also those added later,
// is completed without a change here.
func Completion(program string) cli.Command {
	return cli.Command{
		Name:    "completion",
		Summary: "print a shell completion script for bash, zsh or fish",
		Usage:   "bash|zsh|fish",
		Example: "source <(sharenote completion bash)    # in ~/.bashrc\n" +
			"sharenote completion zsh > \"${fpath[1]}/_sharenote\"\n" +
			"sharenote completion fish > ~/.config/fish/completions/sharenote.fish",
		Run: func(ctx context.Context, env cli.Env, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: completion takes one shell: bash, zsh or fish", cli.ErrUsage)
			}
			tmpl := scripts[args[0]]
			if tmpl == nil {
				return fmt.Errorf("%w: no completion for %q: bash, zsh or fish", cli.ErrUsage, args[0])
			}
			cmds, err := readHelp(ctx, env.Main)
			if err != nil {
				return err
			}
			return tmpl.Execute(env.Stdout, struct {
				Program  string
				Commands []commandHelp
			}{program, cmds})
		},
	}
}

// commandHelp is what the completion scripts need of a command.
type commandHelp struct {
	Name, Summary string
	Flags         []string
}

// readHelp reads the commands from the program's help, and each one's flags from its own.
func readHelp(ctx context.Context, main func(ctx context.Context, env cli.Env, args []string) int) ([]commandHelp, error) {
	help := func(args ...string) (string, error) {
		var out bytes.Buffer
		if code := main(ctx, cli.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: io.Discard}, args); code != 0 {
			return "", fmt.Errorf("%s: exit %d", strings.Join(args, " "), code)
		}
		return out.String(), nil
	}
	usage, err := help("--help")
	if err != nil {
		return nil, err
	}
	var cmds []commandHelp
	for _, line := range slices.Concat(section(usage, cli.Sections[0]), section(usage, cli.Sections[1])) {
		name, summary, _ := strings.Cut(strings.TrimSpace(line), " ")
		c := commandHelp{Name: name, Summary: strings.TrimSpace(summary)}
		text, err := help(name, "--help")
		if err != nil {
			return nil, err
		}
		for _, line := range section(text, "flags:") {
			if flag, ok := strings.CutPrefix(line, "  -"); ok {
				c.Flags = append(c.Flags, "--"+strings.Fields(flag)[0])
			}
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// section returns the lines of text after the line title, up to the next empty line.
func section(text, title string) []string {
	var lines []string
	in := false
	for sc := bufio.NewScanner(strings.NewReader(text)); sc.Scan(); {
		switch line := sc.Text(); {
		case line == title:
			in = true
		case in && line == "":
			return lines
		case in:
			lines = append(lines, line)
		}
	}
	return lines
}

// scripts are the completion scripts, by shell, of .Program and its .Commands: each
// completes the command (with its summary where the shell shows one), then its flags;
// other words complete as file names.
var scripts = map[string]*template.Template{
	"bash": script(`# bash completion for {{.Program}}: source <({{.Program}} completion bash)
_{{.Program}}() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W '{{range .Commands}}{{.Name}} {{end}}' -- "$cur"))
    return
  fi
  [[ $cur == -* ]] || return
  case ${COMP_WORDS[1]} in
{{- range .Commands}}{{if .Flags}}
    {{.Name}}) COMPREPLY=($(compgen -W '{{join .Flags " "}}' -- "$cur")) ;;{{end}}{{end}}
  esac
}
complete -o default -F _{{.Program}} {{.Program}}
`),
	"zsh": script(`#compdef {{.Program}}
_{{.Program}}() {
  if (( CURRENT == 2 )); then
    local -a commands=(
{{- range .Commands}}
      {{quote (print .Name ":" .Summary)}}{{end}}
    )
    _describe command commands
    return
  fi
  if [[ $PREFIX == -* ]]; then
    case $words[2] in
{{- range .Commands}}{{if .Flags}}
      {{.Name}}) compadd -- {{join .Flags " "}} ;;{{end}}{{end}}
    esac
  else
    _files
  fi
}
compdef _{{.Program}} {{.Program}}
`),
	"fish": script(`# fish completion for {{.Program}}
{{- $p := .Program}}{{range .Commands}}
complete -c {{$p}} -f -n __fish_use_subcommand -a {{.Name}} -d {{quote .Summary}}
{{- $c := .Name}}{{range .Flags}}
complete -c {{$p}} -n '__fish_seen_subcommand_from {{$c}}' -l {{trimPrefix . "--"}}{{end}}{{end}}
`),
}

func script(text string) *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"join": strings.Join, "quote": shellQuote, "trimPrefix": strings.TrimPrefix,
	}).Parse(text))
}

// shellQuote quotes s in single quotes for bash, zsh and fish alike.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
