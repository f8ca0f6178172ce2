package meshconfig

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Parse decodes a mesh config written in YAML (or JSON) over Default, so
// missing fields keep their defaults, and validates it. Unknown fields and
// duplicate keys are errors: a misspelt field would otherwise be silently
// ignored. An empty document yields Default.
func Parse(data []byte) (MeshConfig, error) {
	c := Default()
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return MeshConfig{}, fmt.Errorf("decoding mesh config: %w", err)
		}
	}
	if err := c.Validate(); err != nil {
		return MeshConfig{}, fmt.Errorf("invalid mesh config: %w", err)
	}
	return c, nil
}
