// Command karpenter-scheduler answers, with Karpenter's own provisioning scheduler, whether Karpenter
// launches a node for pending Pods with ResourceClaims on dynamic NodePools, and of which instance
// types. It is the e2e tier's oracle for the toolkit's model of Karpenter's dynamic DRA provisioning.
//
// What is real: the scheduler (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling:
// NewTopology, NewScheduler, Solve) and its DRA allocator (pkg/scheduling/dynamicresources:
// NewAllocator, BuildAttributeBindings), built as Provisioner.NewScheduler builds them
// (pkg/controllers/provisioning/provisioner.go); the NodePools it considers (nodepool.ListManaged,
// static ones left out, ordered by weight); the AWS provider's CloudProvider.GetInstanceTypes
// (github.com/aws/karpenter-provider-aws pkg/cloudprovider), which resolves the EC2NodeClass and
// attaches the DRA device metadata of pkg/providers/nvidiadra and efadra under the DRANVIDIAGPU /
// DRAEFA feature gates (parsed by its options.ParseFeatureGates) and settings.ignoreDRARequests;
// each instance type built by the provider's instancetype.NewDefaultResolver from an EC2
// DescribeInstanceTypes record. What is supplied by the caller: those records, the zones of the
// EC2NodeClass's subnets (its status, which the controller would discover), and the offerings (an
// available on-demand and spot offering in each zone, all at one price: prices only order the
// launch, never decide it). Not modelled: the EC2NodeClass's kubelet settings (the resolver gets an
// empty configuration, the provider's defaults), which size only CPU, memory and pods, and daemonset
// overhead: the Pods this program is given request devices, not CPU or memory.
//
// Input (stdin, JSON): region, zones, awsFeatureGates (the AWS_FEATURE_GATES string),
// ignoreDRARequests, instanceTypes (DescribeInstanceTypes records), nodePools, nodeClasses,
// deviceClasses, and cases: each a set of NodePool names, ResourceClaims, ResourceClaimTemplates and
// pending Pods solved on its own, in one scheduling loop. A Pod's claim from a template becomes a
// ResourceClaim named <pod>-<claim> with the template's spec, as kube-controller-manager's
// resourceclaim controller makes it. Output (stdout, JSON): per case, per Pod, the NodePool and
// instance types of the NodeClaim Karpenter would create for it, or the scheduler's error.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awscloudprovider "github.com/aws/karpenter-provider-aws/pkg/cloudprovider"
	awsoptions "github.com/aws/karpenter-provider-aws/pkg/operator/options"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/scheduling/dynamicresources"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
)

type input struct {
	Region            string                      `json:"region"`
	Zones             []string                    `json:"zones"`
	AWSFeatureGates   string                      `json:"awsFeatureGates"`
	IgnoreDRARequests bool                        `json:"ignoreDRARequests"`
	InstanceTypes     []ec2types.InstanceTypeInfo `json:"instanceTypes"`
	NodePools         []karpv1.NodePool           `json:"nodePools"`
	NodeClasses       []awsv1.EC2NodeClass        `json:"nodeClasses"`
	DeviceClasses     []resourcev1.DeviceClass    `json:"deviceClasses"`
	Cases             []caseInput                 `json:"cases"`
}

type caseInput struct {
	Name                   string                             `json:"name"`
	NodePools              []string                           `json:"nodePools"`
	ResourceClaims         []resourcev1.ResourceClaim         `json:"resourceClaims"`
	ResourceClaimTemplates []resourcev1.ResourceClaimTemplate `json:"resourceClaimTemplates"`
	Pods                   []corev1.Pod                       `json:"pods"`
}

type podResult struct {
	Pod           string   `json:"pod"`
	NodePool      string   `json:"nodePool,omitempty"`
	InstanceTypes []string `json:"instanceTypes,omitempty"`
	Error         string   `json:"error,omitempty"`
}

type caseResult struct {
	Name string      `json:"name"`
	Pods []podResult `json:"pods"`
}

// infoProvider is the instancetype.Provider the AWS CloudProvider lists instance types from: the
// provider's own resolver builds each one from its DescribeInstanceTypes record for the EC2NodeClass;
// the offerings are supplied (see the header).
type infoProvider struct {
	region string
	infos  []ec2types.InstanceTypeInfo
}

func (p *infoProvider) List(ctx context.Context, nodeClass instancetype.NodeClass) ([]*cloudprovider.InstanceType, error) {
	resolver := instancetype.NewDefaultResolver(p.region, nil)
	zoneInfo := nodeClass.ZoneInfo()
	zones := make([]string, 0, len(zoneInfo))
	for _, z := range zoneInfo {
		zones = append(zones, z.Zone)
	}
	var out []*cloudprovider.InstanceType
	for _, info := range p.infos {
		it, err := resolver.Resolve(ctx, info, zones, nodeClass, &awsv1.ParsedKubeletConfig{})
		if err != nil {
			return nil, err
		}
		for _, z := range zoneInfo {
			for _, capacityType := range []string{karpv1.CapacityTypeOnDemand, karpv1.CapacityTypeSpot} {
				it.Offerings = append(it.Offerings, &cloudprovider.Offering{
					Requirements: karpscheduling.NewRequirements(
						karpscheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType),
						karpscheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, z.Zone),
						karpscheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, z.ZoneID),
						karpscheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
						karpscheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
						karpscheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
					),
					Price:     1,
					Available: true,
				})
			}
		}
		out = append(out, it)
	}
	return out, nil
}

func (p *infoProvider) Get(ctx context.Context, nodeClass instancetype.NodeClass, name ec2types.InstanceType) (*cloudprovider.InstanceType, error) {
	its, err := p.List(ctx, nodeClass)
	if err != nil {
		return nil, err
	}
	for _, it := range its {
		if it.Name == string(name) {
			return it, nil
		}
	}
	return nil, fmt.Errorf("instance type %s not supplied", name)
}

func (p *infoProvider) FilterForNodeClass(_ context.Context, its []*cloudprovider.InstanceType, _ instancetype.NodeClass) []*cloudprovider.InstanceType {
	return its
}

func (p *infoProvider) ValidateKubeletExpressions(context.Context, instancetype.NodeClass) error {
	return nil
}

// claimsFromTemplates gives each Pod claim that names a template the ResourceClaim the resourceclaim
// controller would create for it (kubernetes pkg/controller/resourceclaim/controller.go, handleClaim:
// the template's spec, owned by the Pod), recorded in the Pod's status as the controller records it.
func claimsFromTemplates(c caseInput) ([]resourcev1.ResourceClaim, error) {
	templates := map[string]resourcev1.ResourceClaimTemplate{}
	for _, t := range c.ResourceClaimTemplates {
		templates[t.Namespace+"/"+t.Name] = t
	}
	var claims []resourcev1.ResourceClaim
	for i := range c.Pods {
		pod := &c.Pods[i]
		for _, pc := range pod.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil {
				continue
			}
			t, ok := templates[pod.Namespace+"/"+*pc.ResourceClaimTemplateName]
			if !ok {
				return nil, fmt.Errorf("case %s: pod %s names ResourceClaimTemplate %s, which is not given", c.Name, pod.Name, *pc.ResourceClaimTemplateName)
			}
			name := pod.Name + "-" + pc.Name
			claims = append(claims, resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace, Labels: t.Spec.Labels, Annotations: t.Spec.Annotations},
				Spec:       t.Spec.Spec,
			})
			pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses, corev1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &name})
		}
	}
	return claims, nil
}

func solve(ctx context.Context, in *input, c caseInput) (caseResult, error) {
	result := caseResult{Name: c.Name, Pods: []podResult{}}
	generated, err := claimsFromTemplates(c)
	if err != nil {
		return result, err
	}
	var objects []client.Object
	wanted := map[string]bool{}
	for _, name := range c.NodePools {
		wanted[name] = true
	}
	for i := range in.NodePools {
		if wanted[in.NodePools[i].Name] {
			objects = append(objects, in.NodePools[i].DeepCopy())
		}
	}
	for i := range in.NodeClasses {
		nc := in.NodeClasses[i].DeepCopy()
		// The subnets Karpenter's subnet controller would have discovered: one per supplied zone.
		nc.Status.Subnets = nil
		for j, zone := range in.Zones {
			nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: fmt.Sprintf("subnet-%d", j), Zone: zone, ZoneID: fmt.Sprintf("zone-id-%d", j)})
		}
		objects = append(objects, nc)
	}
	for i := range in.DeviceClasses {
		objects = append(objects, in.DeviceClasses[i].DeepCopy())
	}
	for _, claims := range [][]resourcev1.ResourceClaim{c.ResourceClaims, generated} {
		for i := range claims {
			objects = append(objects, claims[i].DeepCopy())
		}
	}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objects...).Build()
	recorder := events.NewRecorder(&record.FakeRecorder{})
	provider := awscloudprovider.New(&infoProvider{region: in.Region, infos: in.InstanceTypes}, nil, recorder, kube, nil, nil, nil, nil, nil, nil)
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, kube, provider)

	// Provisioner.NewScheduler: managed, non-static NodePools by weight, each with its instance types.
	nodePools, err := nodepoolutils.ListManaged(ctx, kube, provider)
	if err != nil {
		return result, err
	}
	var dynamic []*karpv1.NodePool
	for _, np := range nodePools {
		if !nodepoolutils.IsStatic(np) {
			dynamic = append(dynamic, np)
		}
	}
	nodepoolutils.OrderByWeight(dynamic)
	instanceTypes := map[string][]*cloudprovider.InstanceType{}
	for _, np := range dynamic {
		its, err := provider.GetInstanceTypes(ctx, np)
		if err != nil {
			return result, fmt.Errorf("instance types of NodePool %s: %w", np.Name, err)
		}
		if len(its) > 0 {
			instanceTypes[np.Name] = its
		}
	}
	pods := make([]*corev1.Pod, 0, len(c.Pods))
	for i := range c.Pods {
		pod := c.Pods[i].DeepCopy()
		if pod.UID == "" {
			pod.UID = types.UID(pod.Namespace + "/" + pod.Name)
		}
		pods = append(pods, pod)
	}
	topology, err := scheduling.NewTopology(ctx, kube, cluster, nil, dynamic, instanceTypes, pods)
	if err != nil {
		return result, fmt.Errorf("topology: %w", err)
	}
	var allocator *dynamicresources.Allocator
	if !coreoptions.FromContext(ctx).IgnoreDRARequests {
		// No node exists yet: no in-cluster ResourceSlices and no allocated devices.
		allocator = dynamicresources.NewAllocator(nil, dynamicresources.AllocatedDeviceState{}, dynamicresources.BuildAttributeBindings(instanceTypes), kube, nil)
	}
	s := scheduling.NewScheduler(ctx, kube, dynamic, cluster, nil, topology, instanceTypes, nil, recorder, clk, nil, allocator,
		scheduling.DisableReservedCapacityFallback, scheduling.MinValuesPolicy(coreoptions.FromContext(ctx).MinValuesPolicy))
	results, err := s.Solve(ctx, pods)
	if err != nil {
		return result, fmt.Errorf("solve: %w", err)
	}
	placed := map[types.UID]podResult{}
	for _, nc := range results.NewNodeClaims {
		names := make([]string, 0, len(nc.InstanceTypeOptions))
		for _, it := range nc.InstanceTypeOptions {
			names = append(names, it.Name)
		}
		sort.Strings(names)
		for _, pod := range nc.Pods {
			placed[pod.UID] = podResult{Pod: pod.Name, NodePool: nc.NodePoolName, InstanceTypes: names}
		}
	}
	for pod, perr := range results.PodErrors {
		placed[pod.UID] = podResult{Pod: pod.Name, Error: perr.Error()}
	}
	for _, pod := range pods {
		r, ok := placed[pod.UID]
		if !ok {
			r = podResult{Pod: pod.Name, Error: "neither placed on a new NodeClaim nor given an error"}
		}
		result.Pods = append(result.Pods, r)
	}
	return result, nil
}

func run() error {
	var in input
	// DescribeInstanceTypes records carry fields newer than the pinned EC2 SDK's types: unknown
	// fields are ignored rather than refused.
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	gates, err := awsoptions.ParseFeatureGates(in.AWSFeatureGates)
	if err != nil {
		return fmt.Errorf("awsFeatureGates: %w", err)
	}
	log.SetLogger(logging.NopLogger)
	ctx := awsoptions.ToContext(context.Background(), &awsoptions.Options{FeatureGates: gates})
	ctx = coreoptions.ToContext(ctx, &coreoptions.Options{IgnoreDRARequests: in.IgnoreDRARequests, MinValuesPolicy: coreoptions.MinValuesPolicyStrict})
	out := make([]caseResult, 0, len(in.Cases))
	for _, c := range in.Cases {
		r, err := solve(ctx, &in, c)
		if err != nil {
			return fmt.Errorf("case %s: %w", c.Name, err)
		}
		out = append(out, r)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"cases": out})
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-scheduler:", err)
		os.Exit(1)
	}
}
