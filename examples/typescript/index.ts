// A platform team's TypeScript program: eks-devices' Platform through the generated SDK. The arguments
// are the stack configuration's sections (see docs/configuration.md), checked when the
// component is constructed: every problem comes back as a property error and nothing is created.
import * as pulumi from "@pulumi/pulumi";
import * as eksDevices from "@pulumi/eks-devices";

// The block between the markers is strict JSON, so the project's tests plan it like the provider does.
// platform-args:begin
const args: eksDevices.PlatformArgs = {
    "region": "us-east-2",
    "cluster": {
        "name": "research",
        "version": "1.36",
        "mode": "karpenter",
        "karpenter": {"version": "1.15.0"}
    },
    "network": {"availabilityZoneCount": 3, "natGateways": "single"},
    "nodePools": {
        "h100": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}},
        "l40s": {
            "instanceTypes": ["g6e.xlarge", "g6e.2xlarge"],
            "devices": {"nvidia": "device-plugin"},
            "gpuSharing": {"strategy": "time-slicing", "replicas": 4}
        }
    },
    "helmValues": {"nvidia-dra-driver": {"kubeletPlugin": {"priorityClassName": "system-node-critical"}}}
};
// platform-args:end

const platform = new eksDevices.Platform("research", args);

export const clusterName = platform.clusterName;
export const kubeconfig = platform.kubeconfig; // a secret
export const vpcId = platform.vpcId;
export const nodeRoleArn = platform.nodeRoleArn;
// Per family the manager each pool got and why, e.g. h100: nvidia → dra, efa → dra.
export const h100Devices = platform.devicePlan.apply(plan => plan.pools["h100"].managers);
export const warnings = platform.devicePlan.apply(plan => plan.findings.map(f => `${f.slug} at ${f.path}`));
