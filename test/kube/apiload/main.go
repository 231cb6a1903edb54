// apiload runs a controller and its node agents against a real kube-apiserver with real client-go informers, the way
// the unbounded-net write-up's components behaved before and after its five changes, so that every API call they make
// (reads and watches included) can be counted from the API server's audit log and from client-go's own metrics.
//
//	apiload setup -server URL -token ADMIN -agents N -out tokens.json
//	    the six kinds' CRDs, namespaces, service accounts (their tokens into tokens.json), RBAC, the agents' nodes and
//	    objects, and a FlowSchema that sends the agents to a priority level with very few seats, which rejects (429)
//	    rather than queues
//	apiload run -server URL -tokens tokens.json -role controller|agents -version v1|v2 -seconds S -metrics ADDR
//	    v1: agents watch six kinds with client-go's watch timeout (scaled by -watch-scale), the controller updates every
//	    SiteNodeSlice unconditionally, and at -storm-at every agent lists SiteNodeSlices from etcd at once;
//	    v2: agents watch three kinds with the timeout doubled, the controller skips unchanged updates.
//	    Serves client-go's metrics (rest_client_*) on ADDR; after S seconds it stops calling, serves them -linger more
//	    seconds, and exits.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/restclient" // registers client-go's rest_client_* metrics
)

const (
	group            = "net.unbounded-cloud.io"
	agentNamespace   = "unbounded-net"
	controlNamespace = "unbounded-net-system"
	flowName         = "unbounded-net-agents"
)

var kinds = []string{"sites", "sitenodeslices", "gatewaypools", "gatewaypoolnodes", "sitegatewaypoolassignments", "gatewaypoolpeerings"}

func gvr(resource string) schema.GroupVersionResource {
	if resource == "nodes" {
		return schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	}
	return schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: resource}
}

// What each version's agents watch: v1 all of the topology, v2 not the three gateway kinds a worker does not use.
var agentKinds = map[string][]string{
	"v1": {"nodes", "sites", "sitenodeslices", "gatewaypools", "gatewaypoolnodes", "sitegatewaypoolassignments"},
	"v2": {"nodes", "sites", "sitenodeslices"},
}

// The user agents' versions: the write-up's v0.8.0, and the release with the five changes.
var releases = map[string]string{"v1": "v0.8.0", "v2": "v0.9.0"}

type tokens struct {
	Controller string       `json:"controller"`
	Agents     []agentToken `json:"agents"`
}

type agentToken struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

func config(server, token, userAgent string, qps float32, burst int) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		UserAgent:       userAgent,
		QPS:             qps,
		Burst:           burst,
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "apiload: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: apiload setup|run [flags]")
	}
	switch os.Args[1] {
	case "setup":
		setup(os.Args[2:])
	case "run":
		run(os.Args[2:])
	default:
		fail("unknown command %q", os.Args[1])
	}
}

func setup(args []string) {
	fs := flag.NewFlagSet("setup", flag.ExitOnError)
	server := fs.String("server", "", "API server URL")
	admin := fs.String("token", "", "admin token")
	agents := fs.Int("agents", 30, "node agents")
	slices := fs.Int("slices", 300, "SiteNodeSlices")
	seats := fs.Int("agent-shares", 1, "nominal concurrency shares of the agents' priority level")
	outPath := fs.String("out", "tokens.json", "where the service accounts' tokens go")
	_ = fs.Parse(args)
	ctx := context.Background()
	cfg := config(*server, *admin, "apiload-setup", 200, 400)
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	crds := gvr("customresourcedefinitions")
	crds.Group, crds.Version = "apiextensions.k8s.io", "v1"
	for _, plural := range kinds {
		kind := map[string]string{
			"sites": "Site", "sitenodeslices": "SiteNodeSlice", "gatewaypools": "GatewayPool", "gatewaypoolnodes": "GatewayPoolNode",
			"sitegatewaypoolassignments": "SiteGatewayPoolAssignment", "gatewaypoolpeerings": "GatewayPoolPeering",
		}[plural]
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": plural + "." + group},
			"spec": map[string]any{
				"group": group,
				"scope": "Cluster",
				"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
				"versions": []any{map[string]any{
					"name": "v1alpha1", "served": true, "storage": true,
					"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
					"subresources": map[string]any{"status": map[string]any{}},
				}},
			},
		}}
		if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating the CRD of %s: %v", plural, err)
		}
	}
	for _, plural := range kinds {
		deadline := time.Now().Add(60 * time.Second)
		for {
			if _, err := dyn.Resource(gvr(plural)).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
				break
			} else if time.Now().After(deadline) {
				fail("%s is not served after 60 s: %v", plural, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, ns := range []string{agentNamespace, controlNamespace} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating namespace %s: %v", ns, err)
		}
	}
	readRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{group}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
	}
	writeRules := append([]rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: []string{"*"}, Verbs: []string{"update", "patch"}}}, readRules...)
	roles := []*rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "unbounded-net-node"}, Rules: readRules},
		{ObjectMeta: metav1.ObjectMeta{Name: "unbounded-net-controller"}, Rules: writeRules},
	}
	for _, role := range roles {
		if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating ClusterRole %s: %v", role.Name, err)
		}
	}
	bindings := []*rbacv1.ClusterRoleBinding{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "unbounded-net-node"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "unbounded-net-node"},
			Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "system:serviceaccounts:" + agentNamespace}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "unbounded-net-controller"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "unbounded-net-controller"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: controlNamespace, Name: "controller"}},
		},
	}
	for _, binding := range bindings {
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating ClusterRoleBinding %s: %v", binding.Name, err)
		}
	}
	// The agents' own priority level: very few seats, and a request that finds them taken is rejected, not queued.
	shares := int32(*seats)
	lendable, borrowing := int32(0), int32(0)
	level := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: flowName},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: &shares,
				LendablePercent:          &lendable,
				// Its seats are its own: it borrows none from idle levels, so its limit holds.
				BorrowingLimitPercent: &borrowing,
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	if _, err := kube.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, level, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fail("creating the agents' priority level: %v", err)
	}
	flow := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: flowName},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowName},
			MatchingPrecedence:         500,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "system:serviceaccounts:" + agentNamespace}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"},
				}},
			}},
		},
	}
	if _, err := kube.FlowcontrolV1().FlowSchemas().Create(ctx, flow, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fail("creating the agents' FlowSchema: %v", err)
	}

	var out tokens
	expiry := int64(3600)
	token := func(ns, name string) string {
		if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating service account %s/%s: %v", ns, name, err)
		}
		request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}
		req, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, request, metav1.CreateOptions{})
		if err != nil {
			fail("a token for %s/%s: %v", ns, name, err)
		}
		return req.Status.Token
	}
	out.Controller = token(controlNamespace, "controller")
	for i := 1; i <= *agents; i++ {
		name := fmt.Sprintf("node-%d", i)
		out.Agents = append(out.Agents, agentToken{Name: name, Token: token(agentNamespace, name)})
		if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating node %s: %v", name, err)
		}
	}
	object := func(resource, name string, spec map[string]any) {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1alpha1", "kind": "", "metadata": map[string]any{"name": name}, "spec": spec}}
		obj.SetKind(map[string]string{
			"sites": "Site", "sitenodeslices": "SiteNodeSlice", "gatewaypools": "GatewayPool", "gatewaypoolnodes": "GatewayPoolNode",
			"sitegatewaypoolassignments": "SiteGatewayPoolAssignment", "gatewaypoolpeerings": "GatewayPoolPeering",
		}[resource])
		if _, err := dyn.Resource(gvr(resource)).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail("creating %s %s: %v", resource, name, err)
		}
	}
	for i := 1; i <= 3; i++ {
		object("sites", fmt.Sprintf("site-%d", i), map[string]any{"nodeCidrs": []any{fmt.Sprintf("10.%d.0.0/16", i)}})
	}
	for i := 1; i <= *slices; i++ {
		nodes := []any{}
		for j := 0; j < 8; j++ {
			nodes = append(nodes, map[string]any{"name": fmt.Sprintf("node-%d", (i*8+j)%*agents+1), "podCidr": fmt.Sprintf("10.%d.%d.0/24", i%250, j)})
		}
		object("sitenodeslices", fmt.Sprintf("slice-%d", i), map[string]any{"site": fmt.Sprintf("site-%d", i%3+1), "nodes": nodes})
	}
	for i := 1; i <= 2; i++ {
		object("gatewaypools", fmt.Sprintf("pool-%d", i), map[string]any{"type": "External"})
		object("sitegatewaypoolassignments", fmt.Sprintf("assignment-%d", i), map[string]any{"site": fmt.Sprintf("site-%d", i), "pool": fmt.Sprintf("pool-%d", i)})
		object("gatewaypoolpeerings", fmt.Sprintf("peering-%d", i), map[string]any{"pools": []any{"pool-1", "pool-2"}})
	}
	for i := 1; i <= *agents; i++ {
		object("gatewaypoolnodes", fmt.Sprintf("node-%d", i), map[string]any{"pool": fmt.Sprintf("pool-%d", i%2+1)})
	}
	data, _ := json.Marshal(out)
	if err := os.WriteFile(*outPath, data, 0o600); err != nil {
		fail("writing %s: %v", *outPath, err)
	}
}

func run(args []string) {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	server := fs.String("server", "", "API server URL")
	tokenFile := fs.String("tokens", "tokens.json", "the tokens setup wrote")
	role := fs.String("role", "agents", "controller or agents")
	version := fs.String("version", "v1", "v1 (before the five changes) or v2 (after)")
	seconds := fs.Float64("seconds", 60, "how long to call the API server")
	linger := fs.Float64("linger", 4, "seconds to keep serving metrics after the calls stop")
	metricsAddr := fs.String("metrics", "127.0.0.1:0", "where client-go's metrics are served")
	watchScale := fs.Float64("watch-scale", 1, "client-go's watch timeout (5–10 min) scaled by this, so a test sees re-establishments")
	stormAt := fs.Float64("storm-at", -1, "seconds in: every agent lists SiteNodeSlices from etcd at once (negative: never)")
	_ = fs.Parse(args)
	if _, ok := agentKinds[*version]; !ok {
		fail("-version must be v1 or v2")
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		fail("reading %s: %v", *tokenFile, err)
	}
	var toks tokens
	if err := json.Unmarshal(raw, &toks); err != nil {
		fail("reading %s: %v", *tokenFile, err)
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	listener := &http.Server{Addr: *metricsAddr, Handler: mux}
	ln, err := net.Listen("tcp", *metricsAddr)
	if err != nil {
		fail("serving metrics on %s: %v", *metricsAddr, err)
	}
	go func() { _ = listener.Serve(ln) }()
	fmt.Printf("metrics on %s\n", ln.Addr())

	ctx, stop := context.WithTimeout(context.Background(), time.Duration(*seconds*float64(time.Second)))
	defer stop()
	// The watch timeout client-go's reflector chose, scaled (and doubled in v2, the write-up's change); lists are left alone.
	factor := *watchScale
	if *version == "v2" {
		factor *= 2
	}
	tweak := func(options *metav1.ListOptions) {
		if options.TimeoutSeconds != nil { // only the reflector's watches carry a timeout; its lists do not
			scaled := int64(float64(*options.TimeoutSeconds)*factor + 0.5)
			if scaled < 1 {
				scaled = 1
			}
			options.TimeoutSeconds = &scaled
		}
	}
	var wg sync.WaitGroup
	switch *role {
	case "controller":
		cfg := config(*server, toks.Controller, "unbounded-net-controller/"+releases[*version], 50, 100)
		wg.Add(1)
		go func() { defer wg.Done(); controller(ctx, cfg, *version, tweak) }()
	case "agents":
		storm := newBarrier(len(toks.Agents))
		for _, a := range toks.Agents {
			cfg := config(*server, a.Token, "unbounded-net-node/"+releases[*version], 5, 10)
			wg.Add(1)
			go func(name string) {
				defer wg.Done()
				agent(ctx, cfg, name, *version, tweak, *stormAt, storm)
			}(a.Name)
		}
	default:
		fail("-role must be controller or agents")
	}
	wg.Wait()
	time.Sleep(time.Duration(*linger * float64(time.Second)))
	fmt.Println("done")
}

// informers starts a dynamic informer on each resource and waits for them to sync.
func informers(ctx context.Context, cfg *rest.Config, resources []string, tweak func(*metav1.ListOptions)) dynamicinformer.DynamicSharedInformerFactory {
	dyn := dynamic.NewForConfigOrDie(cfg)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, tweak)
	for _, r := range resources {
		factory.ForResource(gvr(r))
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return factory
}

// The controller: reconciles every SiteNodeSlice every 10 s; v1 writes each back whether or not it changed, v2 skips the unchanged.
func controller(ctx context.Context, cfg *rest.Config, version string, tweak func(*metav1.ListOptions)) {
	factory := informers(ctx, cfg, []string{"sites", "sitenodeslices"}, tweak)
	dyn := dynamic.NewForConfigOrDie(cfg)
	lister := factory.ForResource(gvr("sitenodeslices")).Lister()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			factory.Shutdown()
			return
		case <-tick.C:
		}
		objects, _ := lister.List(labels.Everything())
		for _, o := range objects {
			if ctx.Err() != nil {
				break
			}
			current := o.(*unstructured.Unstructured)
			desired := current.DeepCopy() // what the reconcile computes: the same slice
			if version == "v2" && equalSpec(current, desired) {
				continue
			}
			_, _ = dyn.Resource(gvr("sitenodeslices")).Update(ctx, desired, metav1.UpdateOptions{})
		}
	}
}

func equalSpec(a, b *unstructured.Unstructured) bool {
	x, _ := json.Marshal(a.Object["spec"])
	y, _ := json.Marshal(b.Object["spec"])
	return string(x) == string(y)
}

// An agent: its informers, a look at its own Node every 2 s, and (v1, at stormAt) a list of every SiteNodeSlice from etcd at the moment all the others do.
func agent(ctx context.Context, cfg *rest.Config, name, version string, tweak func(*metav1.ListOptions), stormAt float64, storm *barrier) {
	started := time.Now()
	factory := informers(ctx, cfg, agentKinds[version], tweak)
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	// Spread the agents' looks over the period, as nodes that started at different times would.
	time.Sleep(time.Duration(rand.Int63n(int64(2 * time.Second))))
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	stormed := stormAt < 0 || version != "v1"
	for {
		select {
		case <-ctx.Done():
			factory.Shutdown()
			return
		case <-tick.C:
		}
		_, _ = kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if !stormed && time.Since(started).Seconds() >= stormAt {
			stormed = true
			storm.wait()
			_, _ = dyn.Resource(gvr("sitenodeslices")).List(ctx, metav1.ListOptions{})
		}
	}
}

// barrier holds each caller until all n have come (or 5 s have passed): the agents' lists leave at one moment.
type barrier struct {
	mu      sync.Mutex
	waiting int
	n       int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.waiting++
	if b.waiting == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(5 * time.Second):
	}
}
