package collections

import (
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// newMesh derives the effective mesh config: the input's value, or the
// defaults when there is none.
func newMesh(g *krt.Graph, in krt.Collection[meshconfig.MeshConfig]) krt.Singleton[meshconfig.MeshConfig] {
	return krt.NewSingleton(g, func(ctx krt.HandlerContext) *meshconfig.MeshConfig {
		m, ok := krt.FetchOne(ctx, in)
		if !ok {
			m = meshconfig.Default()
		}
		return &m
	}, krt.WithName("MeshConfig"))
}

// fetchMesh reads the effective mesh config from a transformation.
func fetchMesh(ctx krt.HandlerContext, mesh krt.Collection[meshconfig.MeshConfig]) meshconfig.MeshConfig {
	if m, ok := krt.FetchOne(ctx, mesh); ok {
		return m
	}
	return meshconfig.Default()
}
