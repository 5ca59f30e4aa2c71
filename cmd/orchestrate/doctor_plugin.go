package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// pluginLoads asks Claude Code whether the enabled plugin loads: claude
// plugin list --json gives each plugin's load errors (a hooks file it
// refused, a manifest it could not read), which a session shows no one
// when it runs headless.
func (d *doctor) pluginLoads(ctx context.Context) {
	if d.pluginID == "" {
		return
	}
	cli, _ := agentcli.Lookup(agentcli.Claude)
	path, err := exec.LookPath(cli.Program)
	if err != nil {
		d.add("plugin", "note", cli.Program+" is not on PATH: whether Claude Code loads "+d.pluginID+" is unknown", cli.Install)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, agentcli.PluginListArgs...)
	cmd.Dir = d.repo
	cmd.Env = append(os.Environ(), "ORCHESTRATE_CHILD=1")
	out, err := cmd.Output()
	list := cli.Program + " " + strings.Join(agentcli.PluginListArgs, " ")
	if err != nil {
		d.add("plugin", "note", "whether Claude Code loads "+d.pluginID+" is unknown: "+list+": "+err.Error(), "")
		return
	}
	errs, listed, err := agentcli.PluginLoadErrors(out, d.pluginID)
	claude := "Claude Code"
	if v := cliVersion(ctx, path); !strings.HasPrefix(v, "(") {
		claude += " " + strings.Fields(v)[0]
	}
	switch {
	case err != nil:
		d.add("plugin", "note", "whether Claude Code loads "+d.pluginID+" is unknown: "+list+" printed no list ("+err.Error()+")", "")
	case !listed:
		d.add("plugin", "problem", d.pluginID+" is enabled but "+claude+" does not list it: it is not installed", cli.Program+" plugin install "+d.pluginID)
	case len(errs) > 0:
		_, market, _ := strings.Cut(d.pluginID, "@")
		for i, e := range errs {
			errs[i] = strings.TrimSuffix(e, ".")
		}
		d.add("plugin", "problem", claude+" does not load "+d.pluginID+" cleanly: "+strings.Join(errs, "; "),
			"bring the marketplace's clone of orchestrate up to date (git pull), then "+cli.Program+" plugin marketplace update "+market+" && "+cli.Program+" plugin update "+d.pluginID)
	default:
		d.add("plugin", "ok", claude+" loads "+d.pluginID+" without an error", "")
	}
}
