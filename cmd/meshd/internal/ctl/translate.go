package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"text/tabwriter"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshd/meshd/cmd/meshd/app"
)

// Translated is the answer of meshd translate -o json.
type Translated struct {
	Node      string `json:"node"`
	Namespace string `json:"namespace,omitempty"`
	Isolated  bool   `json:"namespaceIsolation"`
	// Resources hold each resource in protojson, with its type and name.
	Resources []TranslatedResource `json:"resources"`
}

// TranslatedResource is one resource of a Translated.
type TranslatedResource struct {
	TypeURL  string          `json:"typeUrl"`
	Name     string          `json:"name"`
	Resource json.RawMessage `json:"resource"`
}

func runTranslate(args []string, out io.Writer) error {
	var c common
	var dir, node string
	var isolation bool
	pos, err := parse("translate", args, out, &c, func(fs *pflag.FlagSet) {
		fs.StringVar(&dir, "config-dir", "", "`DIR` of Kubernetes manifests, as meshd --config-dir reads it (required)")
		fs.StringVar(&node, "node", "", "xDS node `ID` to translate for, such as sidecar~10.0.0.5~web-0.shop~shop.svc.cluster.local (required)")
		fs.BoolVar(&isolation, "namespace-isolation", false, "hide what the node's namespace may not see, as meshd --namespace-isolation does")
	})
	switch {
	case err != nil:
		return err
	case len(pos) > 0:
		return usageError{fmt.Errorf("unexpected arguments %q", pos)}
	case dir == "" || node == "":
		return usageError{fmt.Errorf("--config-dir and --node are required")}
	}
	cfg := app.DefaultConfig()
	cfg.ConfigDir, cfg.NamespaceIsolation = dir, isolation
	t, err := app.Translate(cfg, node)
	if err != nil {
		return err
	}
	if c.output == "json" {
		return writeTranslatedJSON(out, t)
	}
	return writeTranslated(out, t)
}

func writeTranslatedJSON(out io.Writer, t app.Translation) error {
	j := Translated{Node: t.Node, Namespace: t.Namespace, Isolated: t.Isolated, Resources: []TranslatedResource{}}
	for _, r := range t.Resources {
		b, err := protojson.Marshal(r.Message)
		if err != nil {
			return fmt.Errorf("%s %s: %w", path.Base(r.TypeURL), r.Name, err)
		}
		j.Resources = append(j.Resources, TranslatedResource{TypeURL: r.TypeURL, Name: r.Name, Resource: b})
	}
	return writeJSON(out, j)
}

// writeTranslated lists the resources by type and name; -o json holds
// their content.
func writeTranslated(out io.Writer, t app.Translation) error {
	scope := "every node sees the same resources (the node id matters with --namespace-isolation)"
	switch {
	case t.Isolated && t.Namespace != "":
		scope = "what namespace " + t.Namespace + " may see"
	case t.Isolated:
		scope = "the node id names no namespace: what every namespace may see"
	}
	fmt.Fprintf(out, "node %s: %s\n\n", t.Node, scope)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tNAME")
	for _, r := range t.Resources {
		fmt.Fprintf(tw, "%s\t%s\n", shortType(r.TypeURL), r.Name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "\n%d resources; -o json shows them whole\n", len(t.Resources))
	return err
}
