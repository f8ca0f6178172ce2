package statuswriter

import (
	"context"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshd/meshd/krt"
)

// object is a kind of object with a one-word status.
type object struct {
	metav1.ObjectMeta
	Status string
}

// fakeServer holds one object with resource versions, as the API server
// does: an update naming an older version conflicts.
type fakeServer struct {
	obj     object
	updates int
}

func (s *fakeServer) get(context.Context, string, string) (*object, error) {
	cp := s.obj
	return &cp, nil
}

func (s *fakeServer) update(_ context.Context, o *object) error {
	s.updates++
	if o.ResourceVersion != s.obj.ResourceVersion {
		return apierrors.NewConflict(schema.GroupResource{Resource: "objects"}, o.Name, nil)
	}
	s.set(o.Status)
	return nil
}

// set changes the status and moves the resource version on.
func (s *fakeServer) set(status string) {
	v, _ := strconv.Atoi(s.obj.ResourceVersion)
	s.obj.ResourceVersion, s.obj.Status = strconv.Itoa(v+1), status
}

// TestOwnWriteNotRepeated steps one object through the writer's decisions
// while the collection lags behind the server, as an informer does: a
// copy the writer's own write replaced is not written from again, and the
// write's echo, or anyone else's change, is decided on as usual.
func TestOwnWriteNotRepeated(t *testing.T) {
	g := krt.NewGraph()
	objects := krt.NewStatic[*object](g, krt.WithKey(func(o *object) string { return o.Namespace + "/" + o.Name }))
	srv := &fakeServer{obj: object{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}}
	w := New(Options{}, nil, &Kind[*object]{
		Name: "Object", Objects: objects,
		Relevant: func(*object) bool { return true },
		Desired: func(o *object) (*object, Outcome) {
			if o.Status == "ok" {
				return o, Unchanged
			}
			cp := *o
			cp.Status = "ok"
			return &cp, Write
		},
		Get: srv.get, Update: srv.update,
	})
	// echo is the informer catching up with the server.
	echo := func() { cp := srv.obj; objects.Set(&cp) }
	echo()
	// theirs is the server's copy after someone else's change that the
	// collection has not seen yet.
	var theirs object
	changedUnseen := func() { srv.set(""); theirs = srv.obj }
	steps := []struct {
		name    string
		do      func()
		want    Outcome
		updates int // the server's update calls so far
	}{
		{"first write", nil, Written, 1},
		{"own write not seen yet", nil, Stale, 1},
		{"own write seen", echo, Unchanged, 1},
		{"someone else cleared it", func() { srv.set(""); echo() }, Written, 2},
		{"own write not seen yet, again", nil, Stale, 2},
		{"a conflict, retried on the server's copy", func() { srv.set(""); echo(); changedUnseen() }, Written, 4},
		{"the change that conflicted seen", func() { objects.Set(&theirs) }, Stale, 4},
		{"own write seen after the conflict", echo, Unchanged, 4},
	}
	for _, step := range steps {
		if step.do != nil {
			step.do()
		}
		out, err := w.reconcile(t.Context(), "Object/ns/a")
		if err != nil || out != step.want || srv.updates != step.updates {
			t.Fatalf("%s: outcome %d, error %v, %d updates; want outcome %d, %d updates",
				step.name, out, err, srv.updates, step.want, step.updates)
		}
	}
	objects.Delete("ns/a")
	if out, err := w.reconcile(t.Context(), "Object/ns/a"); out != NotFound || err != nil || len(w.superseded.byKey) != 0 {
		t.Fatalf("deleted: outcome %d, error %v, %d keys remembered", out, err, len(w.superseded.byKey))
	}
}
