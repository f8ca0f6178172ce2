package meshconfig

import (
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/krt"
)

// ConfigMapKey is the key of a ConfigMap's data that holds the mesh config.
const ConfigMapKey = "mesh"

// ConfigMap is a mesh config read from the "mesh" key of a ConfigMap.
// A missing ConfigMap means Default; a ConfigMap without the key, or with an
// invalid config, keeps the last good config (Default before the first) and
// is reported through Status, the log, and the collection's recorded errors.
type ConfigMap struct {
	config krt.Singleton[MeshConfig]
	status tracker

	mu   sync.Mutex // guards good
	good bool       // a config has been output
}

// FromConfigMap derives the mesh config from the ConfigMap namespace/name
// in configMaps (for example the ConfigMaps of sources.Inputs). The singleton is
// synced once configMaps is.
func FromConfigMap(g *krt.Graph, configMaps krt.Collection[*corev1.ConfigMap], namespace, name string, opts ...Option) *ConfigMap {
	o := buildOptions(opts)
	key := namespace + "/" + name
	c := &ConfigMap{status: tracker{logger: o.logger, status: Status{Source: "configmap " + key}}}
	c.config = krt.NewSingleton(g, func(ctx krt.HandlerContext) *MeshConfig {
		cfg, err := Default(), error(nil)
		if cm, ok := krt.FetchOne(ctx, configMaps, krt.FilterKey(key)); ok {
			if data, has := cm.Data[ConfigMapKey]; has {
				cfg, err = Parse([]byte(data))
			} else {
				err = fmt.Errorf("configmap %s has no key %q", key, ConfigMapKey)
			}
		}
		if err != nil {
			return c.reject(ctx, err)
		}
		c.mu.Lock()
		c.good = true
		c.mu.Unlock()
		c.status.accepted(cfg)
		return &cfg
	}, krt.WithName(o.name))
	return c
}

// reject reports err and keeps the last good config: the engine keeps the
// previous output of a failed computation, and before any there is Default.
func (c *ConfigMap) reject(ctx krt.HandlerContext, err error) *MeshConfig {
	c.status.rejected(err)
	c.mu.Lock()
	good := c.good
	c.mu.Unlock()
	if good {
		ctx.Fail(errors.Join(errors.New("mesh config rejected"), err))
		return nil
	}
	d := Default()
	return &d
}

// Config returns the singleton holding the config in use.
func (c *ConfigMap) Config() krt.Singleton[MeshConfig] { return c.config }

// Status returns where the config comes from and whether the last read was
// accepted.
func (c *ConfigMap) Status() Status { return c.status.get() }
