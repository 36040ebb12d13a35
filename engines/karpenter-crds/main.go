// Command karpenter-crds writes the CustomResourceDefinitions that Karpenter's AWS provider
// publishes with its API package (NodePool, NodeClaim, NodeOverlay, EC2NodeClass) into a folder,
// one YAML file each, and the DRA device metadata the provider scraped from running instances of
// each type (its NVIDIA GPUs and EFAs with their attributes, `drametadata`) as dra-metadata.json.
// Both reach us through the Go import of the pinned module, as its own controller loads them, so
// the tests validate our NodePools against exactly what Karpenter ships, and our model of the
// devices a node publishes against what Karpenter found on real ones.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/karpenter-provider-aws/pkg/apis"
	"github.com/aws/karpenter-provider-aws/pkg/providers/drametadata"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: karpenter-crds OUT_DIR")
		os.Exit(2)
	}
	out := os.Args[1]
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	files := map[string][]byte{
		"karpenter.k8s.aws_ec2nodeclasses.yaml": apis.EC2NodeClassCRD,
		"karpenter.sh_nodepools.yaml":           apis.NodePoolCRD,
		"karpenter.sh_nodeclaims.yaml":          apis.NodeClaimCRD,
		"karpenter.sh_nodeoverlays.yaml":        apis.NodeOverlayCRD,
	}
	metadata, err := json.MarshalIndent(map[string]any{
		"gpu": drametadata.GPUMetadataByInstanceType,
		"efa": drametadata.EFAMetadataByInstanceType,
	}, "", " ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	files["dra-metadata.json"] = metadata
	for name, body := range files {
		if len(body) == 0 {
			fmt.Fprintf(os.Stderr, "karpenter-crds: %s is empty in the module\n", name)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(out, name), body, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
