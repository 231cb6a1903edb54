// connectorctl runs network-services-operator's connector controller as it really behaves, and an agent per Connector
// whose lease renewals stop on a schedule, against a real kube-apiserver, so that what the controller gets wrong can
// be read from the API server's own record:
//
//   - the controller takes the Ready and Accepted conditions with meta.FindStatusCondition (a pointer into the list),
//     changes them in place and hands them to meta.SetStatusCondition, which then sees no change of status and leaves
//     lastTransitionTime where it was: every Ready flip is written with a frozen clock, and Accepted keeps the CRD's
//     1970-01-01 default (connector_controller.go in network-services-operator v0.26.1);
//   - it writes the status (a full update) only when it changed, and -echo sends each status once more, unchanged,
//     a moment later (the API server answers it with the version the object already has: an echo);
//   - Ready is True while the Lease's renewTime + leaseDurationSeconds is in the future; the controller reconciles on
//     every Lease event and once more when the lease expires.
//
//	connectorctl run -server URL -admin-token T -controller-token T -agent-token T -namespace NS -prefix P
//	    -connectors N -seconds S -lease L -schedule "0:12-18,30-36;3:12-26" -echo -agent-delay D
//	    creates N Connectors (P-0 … P-N-1), runs the controller, and D seconds later the agents, for S seconds; an agent
//	    renews its lease every second from its start, except in the schedule's [from, to) seconds for that Connector.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

var connectors = schema.GroupVersionResource{Group: "networking.datumapis.com", Version: "v1alpha1", Resource: "connectors"}

const fieldManager = "connector-controller"

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "connectorctl: "+format+"\n", args...)
	os.Exit(1)
}

func config(server, token, userAgent string) *rest.Config {
	return &rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, UserAgent: userAgent, QPS: 100, Burst: 200}
}

// The connector's status as the controller's Go types hold it.
type connectorStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	LeaseRef   *struct {
		Name string `json:"name"`
	} `json:"leaseRef,omitempty"`
}

// [from, to) seconds in which an agent does not renew.
type gap struct{ from, to float64 }

func parseSchedule(text string) map[int][]gap {
	out := map[int][]gap{}
	for _, part := range strings.Split(text, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		index, spans, ok := strings.Cut(part, ":")
		if !ok {
			fail("schedule %q: want connector:from-to,from-to;…", text)
		}
		i, err := strconv.Atoi(strings.TrimSpace(index))
		if err != nil {
			fail("schedule %q: %v", text, err)
		}
		for _, span := range strings.Split(spans, ",") {
			a, b, ok := strings.Cut(span, "-")
			from, err1 := strconv.ParseFloat(a, 64)
			to, err2 := strconv.ParseFloat(b, 64)
			if !ok || err1 != nil || err2 != nil || to <= from {
				fail("schedule %q: bad span %q", text, span)
			}
			out[i] = append(out[i], gap{from, to})
		}
	}
	return out
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "run" {
		fail("usage: connectorctl run [flags]")
	}
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	server := fs.String("server", "", "API server URL")
	adminToken := fs.String("admin-token", "", "who creates the Connectors")
	controllerToken := fs.String("controller-token", "", "the connector controller's token")
	agentToken := fs.String("agent-token", "", "the agents' token")
	namespace := fs.String("namespace", "default", "the Connectors' namespace")
	prefix := fs.String("prefix", "connector", "the Connectors' name prefix")
	count := fs.Int("connectors", 4, "how many Connectors")
	seconds := fs.Float64("seconds", 28, "how long the agents run")
	leaseSeconds := fs.Int("lease", 3, "the Leases' leaseDurationSeconds")
	schedule := fs.String("schedule", "", "when each agent does not renew")
	echo := fs.Bool("echo", false, "send each status update once more, unchanged, 0.3–1.8 s later")
	agentDelay := fs.Float64("agent-delay", 0, "seconds before the agents start (the controller's first status is written without a Lease)")
	_ = fs.Parse(os.Args[2:])
	gaps := parseSchedule(*schedule)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	admin := dynamic.NewForConfigOrDie(config(*server, *adminToken, "connector-setup/1.0.0"))
	names := make([]string, *count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", *prefix, i)
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.datumapis.com/v1alpha1",
			"kind":       "Connector",
			"metadata":   map[string]any{"name": names[i], "namespace": *namespace},
			"spec":       map[string]any{"connectorClassName": "datum-connect"},
		}}
		if _, err := admin.Resource(connectors).Namespace(*namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: "connector-setup"}); err != nil {
			fail("creating Connector %s: %v", names[i], err)
		}
	}

	controller := newController(*server, *controllerToken, *namespace, *prefix, *echo)
	controllerCtx, stopController := context.WithCancel(ctx)
	go controller.run(controllerCtx)

	agents := kubernetes.NewForConfigOrDie(config(*server, *agentToken, "datum-connect/0.1.4 (agent)"))
	time.Sleep(time.Duration(*agentDelay * float64(time.Second)))
	started := time.Now()
	var wg sync.WaitGroup
	// The agents renew past the run's end, so no lease expires for the run's end alone; the controller stops once the
	// last status and its echo are written, before the agents do.
	renewFor := *seconds + float64(*leaseSeconds) + 1
	for i, name := range names {
		wg.Add(1)
		go func(i int, name string) {
			defer wg.Done()
			runAgent(ctx, agents, *namespace, name, int32(*leaseSeconds), gaps[i], started, renewFor)
		}(i, name)
	}
	time.Sleep(time.Until(started.Add(time.Duration((*seconds + 2) * float64(time.Second)))))
	stopController()
	wg.Wait()
	fmt.Println("connectorctl: done")
}

// An agent: creates its Connector's Lease, then renews it every second except inside its gaps.
func runAgent(ctx context.Context, client kubernetes.Interface, namespace, name string, leaseSeconds int32, gaps []gap, started time.Time, seconds float64) {
	leases := client.CoordinationV1().Leases(namespace)
	holder := name + "-agent"
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &leaseSeconds, RenewTime: &now},
	}
	created, err := leases.Create(ctx, lease, metav1.CreateOptions{FieldManager: "datum-connect"})
	if err != nil {
		fail("creating Lease %s: %v", name, err)
	}
	current := created
	for tick := 1; float64(tick) < seconds; tick++ {
		time.Sleep(time.Until(started.Add(time.Duration(tick) * time.Second)))
		skip := false
		for _, g := range gaps {
			if float64(tick) >= g.from && float64(tick) < g.to {
				skip = true
			}
		}
		if skip {
			continue
		}
		renewed := metav1.NewMicroTime(time.Now())
		current.Spec.RenewTime = &renewed
		updated, err := leases.Update(ctx, current, metav1.UpdateOptions{FieldManager: "datum-connect"})
		if err != nil {
			fail("renewing Lease %s: %v", name, err)
		}
		current = updated
	}
}

type connectorController struct {
	dyn        dynamic.Interface
	kube       kubernetes.Interface
	namespace  string
	prefix     string
	echo       bool
	queue      workqueue.TypedDelayingInterface[string]
	connectors cache.GenericLister
	leases     func(name string) (*coordinationv1.Lease, error)
	start      func(stop <-chan struct{})
}

func newController(server, token, namespace, prefix string, echo bool) *connectorController {
	cfg := config(server, token, "network-services-operator/v0.26.1 connector-controller")
	c := &connectorController{
		dyn:       dynamic.NewForConfigOrDie(cfg),
		kube:      kubernetes.NewForConfigOrDie(cfg),
		namespace: namespace,
		prefix:    prefix,
		echo:      echo,
		queue:     workqueue.NewTypedDelayingQueue[string](),
	}
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.dyn, 0, namespace, nil)
	connectorInformer := dynFactory.ForResource(connectors)
	c.connectors = connectorInformer.Lister()
	enqueue := func(obj any) {
		if o, ok := obj.(metav1.Object); ok && strings.HasPrefix(o.GetName(), prefix+"-") {
			c.queue.Add(o.GetName())
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue}
	_, _ = connectorInformer.Informer().AddEventHandler(handler)
	// Every lease renewal re-runs the reconcile of its Connector (a Watches on Leases with no predicate).
	kubeFactory := informers.NewSharedInformerFactoryWithOptions(c.kube, 0, informers.WithNamespace(namespace))
	leaseInformer := kubeFactory.Coordination().V1().Leases()
	_, _ = leaseInformer.Informer().AddEventHandler(handler)
	c.leases = func(name string) (*coordinationv1.Lease, error) { return leaseInformer.Lister().Leases(namespace).Get(name) }
	c.start = func(stop <-chan struct{}) {
		dynFactory.Start(stop)
		kubeFactory.Start(stop)
		dynFactory.WaitForCacheSync(stop)
		kubeFactory.WaitForCacheSync(stop)
	}
	return c
}

func (c *connectorController) run(ctx context.Context) {
	c.start(ctx.Done())
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	for {
		name, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		c.reconcile(ctx, name)
		c.queue.Done(name)
	}
}

// The reconcile, as network-services-operator's connector controller writes it.
func (c *connectorController) reconcile(ctx context.Context, name string) {
	obj, err := c.connectors.ByNamespace(c.namespace).Get(name)
	if err != nil {
		return
	}
	connector := obj.(*unstructured.Unstructured).DeepCopy()
	var status connectorStatus
	if raw, ok := connector.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status); err != nil {
			fail("reading %s's status: %v", name, err)
		}
	}
	original := *status.DeepCopy()
	generation := connector.GetGeneration()

	readyCondition := apimeta.FindStatusCondition(status.Conditions, "Ready")
	if readyCondition == nil {
		apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: "Ready", Status: metav1.ConditionFalse, Reason: "ConnectorNotReady", Message: "Connector lease has not been created yet.", ObservedGeneration: generation,
		})
		readyCondition = apimeta.FindStatusCondition(status.Conditions, "Ready")
	}
	acceptedCondition := apimeta.FindStatusCondition(status.Conditions, "Accepted")
	if acceptedCondition == nil {
		apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: "Accepted", Status: metav1.ConditionUnknown, Reason: "Pending", ObservedGeneration: generation})
		acceptedCondition = apimeta.FindStatusCondition(status.Conditions, "Accepted")
	}
	// Changed in place, then handed to SetStatusCondition: it compares the condition with itself and keeps the clock.
	acceptedCondition.Status = metav1.ConditionTrue
	acceptedCondition.Reason = "Accepted"
	acceptedCondition.Message = "The connector has been accepted."
	acceptedCondition.ObservedGeneration = generation
	apimeta.SetStatusCondition(&status.Conditions, *acceptedCondition)

	requeue := time.Duration(0)
	lease, err := c.leases(name)
	switch {
	case apierrors.IsNotFound(err):
		readyCondition.Status, readyCondition.Message = metav1.ConditionFalse, "Connector lease not found. Agent may be offline."
	case err != nil:
		fail("reading Lease %s: %v", name, err)
	case lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil:
		readyCondition.Status, readyCondition.Message = metav1.ConditionFalse, "Connector lease has not been renewed yet."
	default:
		expiry := lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
		if time.Now().Before(expiry) {
			readyCondition.Status, readyCondition.Message = metav1.ConditionTrue, "The connector is ready to tunnel traffic."
			requeue = time.Until(expiry) + 100*time.Millisecond
		} else {
			readyCondition.Status, readyCondition.Message = metav1.ConditionFalse, "Connector lease has expired. Agent may be offline."
		}
		status.LeaseRef = &struct {
			Name string `json:"name"`
		}{Name: lease.Name}
	}
	if readyCondition.Status == metav1.ConditionTrue {
		readyCondition.Reason = "ConnectorReady"
	} else {
		readyCondition.Reason = "ConnectorNotReady"
	}
	readyCondition.ObservedGeneration = generation
	apimeta.SetStatusCondition(&status.Conditions, *readyCondition)

	if !equality.Semantic.DeepEqual(original, status) {
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
		if err != nil {
			fail("writing %s's status: %v", name, err)
		}
		connector.Object["status"] = raw
		updated, err := c.dyn.Resource(connectors).Namespace(c.namespace).UpdateStatus(ctx, connector, metav1.UpdateOptions{FieldManager: fieldManager})
		switch {
		case apierrors.IsConflict(err):
			c.queue.AddAfter(name, 100*time.Millisecond)
			return
		case err != nil && ctx.Err() == nil:
			fail("updating %s's status: %v", name, err)
		case err == nil && c.echo:
			// The same status again a moment later: the API server answers with the version the object already has.
			go func(again *unstructured.Unstructured) {
				time.Sleep(time.Duration(300+rand.Intn(1500)) * time.Millisecond)
				_, _ = c.dyn.Resource(connectors).Namespace(c.namespace).UpdateStatus(ctx, again, metav1.UpdateOptions{FieldManager: fieldManager})
			}(updated.DeepCopy())
		}
	}
	if requeue > 0 {
		c.queue.AddAfter(name, requeue)
	}
}

func (s *connectorStatus) DeepCopy() *connectorStatus {
	out := &connectorStatus{Conditions: append([]metav1.Condition(nil), s.Conditions...)}
	if s.LeaseRef != nil {
		ref := *s.LeaseRef
		out.LeaseRef = &ref
	}
	return out
}
