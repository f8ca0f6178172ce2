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
// requests at a time.
func seed(ctx context.Context, env *kubetest.Env, services, pods int) error {
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
	return parallel(pods, func(i int) error { return createPod(ctx, c, i, services) })
}

func createService(ctx context.Context, c kubernetes.Interface, i int) error {
	name := fmt.Sprintf("svc-%d", i)
	_, err := c.CoreV1().Services(benchNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNamespace},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "grpc", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	return err
}

// createPod creates pod i of service i%services, ready, with an IP of
// its own (data only: nothing connects to it).
func createPod(ctx context.Context, c kubernetes.Interface, i, services int) error {
	pods := c.CoreV1().Pods(benchNamespace)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: benchNamespace,
			Labels: map[string]string{"app": fmt.Sprintf("svc-%d", i%services)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
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
