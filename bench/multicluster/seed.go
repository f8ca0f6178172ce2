package main

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

const benchNamespace = "bench"

// seed creates the namespace, the services and the ready pods, eight
// requests at a time; the pods' IPs start with the octet net, one network
// per cluster.
func seed(ctx context.Context, env *kubetest.Env, services, pods int, net byte) error {
	c, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := parallel(services, func(i int) error { return createService(ctx, c, i) }); err != nil {
		return err
	}
	return parallel(pods, func(i int) error { return createPod(ctx, c, i, services, net) })
}

func createService(ctx context.Context, c kubernetes.Interface, i int) error {
	_, err := c.CoreV1().Services(benchNamespace).Create(ctx, serviceObject(i), metav1.CreateOptions{})
	return err
}

// createPod creates pod i of service i%services, ready, with an IP of
// its own (data only: nothing connects to it). The API server takes the
// status in a second write.
func createPod(ctx context.Context, c kubernetes.Interface, i, services int, net byte) error {
	pods := c.CoreV1().Pods(benchNamespace)
	want := podObject(i, services, net)
	pod, err := pods.Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	pod.Status = want.Status
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// serviceObject is Service i, selecting the pods of app svc-<i>.
func serviceObject(i int) *corev1.Service {
	name := fmt.Sprintf("svc-%d", i)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNamespace},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "grpc", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
}

// podObject is pod i of service i%services, ready, at net.x.y.z.
func podObject(i, services int, net byte) *corev1.Pod {
	ip := fmt.Sprintf("%d.%d.%d.%d", net, i>>16&255, i>>8&255, i&255)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: benchNamespace,
			Labels: map[string]string{"app": fmt.Sprintf("svc-%d", i%services)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// withReady returns a copy of pod with its Ready condition set to ready.
func withReady(pod *corev1.Pod, ready bool) *corev1.Pod {
	p := pod.DeepCopy()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

// parallel runs f(0..n-1) on eight goroutines and returns the first
// error.
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
