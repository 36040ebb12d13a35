#!/usr/bin/env bash
# Build the real engines the e2e tests judge our models with, from the Go modules pinned under engines/:
# kube-apiserver, kube-controller-manager, kube-scheduler (k8s.io/kubernetes), etcd (go.etcd.io/etcd/server/v3),
# the Pulumi CLI (github.com/pulumi/pulumi/pkg/v3), pulumi-resource-kubernetes (pulumi-kubernetes/provider/v4)
# karpenter-crds (our program that writes the CRDs Karpenter's Go API package embeds, and the DRA device
# metadata its AWS provider scraped from running instances) and karpenter-scheduler (our program that runs
# Karpenter's provisioning scheduler, with the AWS provider's instance types and DRA metadata, on pending Pods).
# The two Karpenter programs are built once per release of the AWS provider the toolkit models, from one source:
# at the chart's pin from go.mod (bin/karpenter-crds, bin/karpenter-scheduler, CRDs and metadata in karpenter/),
# and at each other release from the modfile karpenter-<tag>.mod beside it (`go build -modfile`; binaries
# suffixed -<tag>, output in karpenter-<tag>/), as the release's DRA device metadata differs.
#
# Output: a version-keyed folder outside the repository, ${XDG_CACHE_HOME:-$HOME/.cache}/eks-devices/engines/<key>,
# whose bin/ path is printed on stdout (progress goes to stderr). The key hashes the wrapper modules, our Go source
# and this script, so a change to any pin builds a new folder; a complete folder is reused without running go.
# `--print` only prints the bin/ path of a complete build (exit 1 when there is none) and never builds.
# Exit 2 when Go is missing (the README's test command then skips the e2e tier and names this script).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'engines: %s\n' "$*" >&2; }

key=$(cd "$root" && cat scripts/engines.sh engines/*/*.mod engines/*/*.sum engines/*/*.go | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/eks-devices/engines/$key"
if [ -f "$cache/complete" ]; then
  echo "$cache/bin"
  exit 0
fi
[ "${1:-}" = "--print" ] && exit 1
command -v go >/dev/null || { say "Go is not installed: the engines cannot be built (Go ≥ 1.26 is needed)"; exit 2; }

mkdir -p "$cache"
exec 9>"$cache.lock"
flock 9  # one build at a time (parallel test workers, a second shell)
if [ -f "$cache/complete" ]; then echo "$cache/bin"; exit 0; fi

bin="$cache/bin"
mkdir -p "$bin" "$cache/karpenter"
export GOFLAGS="-buildvcs=false -mod=readonly"
started=$SECONDS

kubernetes_version=$(cd "$root/engines/kubernetes" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=${kubernetes_version#v1.}
minor=${minor%%.*}
ld="-s -w"
# The version variables Kubernetes' own build sets (hack/lib/version.sh, kube::version::ldflags): without them
# the binaries report v0.0.0-master, which clients and Helm's kubeVersion checks refuse.
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $pkg.gitVersion=$kubernetes_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
say "kube-apiserver, kube-controller-manager, kube-scheduler $kubernetes_version"
(cd "$root/engines/kubernetes" && go build -trimpath -ldflags "$ld" -o "$bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)

say "etcd $(cd "$root/engines/etcd" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
(cd "$root/engines/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)

pulumi_version=$(cd "$root/engines/pulumi" && go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)
say "pulumi $pulumi_version"
(cd "$root/engines/pulumi" && go build -trimpath \
  -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$pulumi_version" \
  -o "$bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)

# pulumi-resource-kubernetes embeds two JSON files its repository generates at build time and does not
# commit (cmd/pulumi-resource-kubernetes/main.go, generate.go), so the verified module is copied and the
# module's own generator is run before the build.
pk8s=github.com/pulumi/pulumi-kubernetes/provider/v4
pk8s_dir=$(cd "$root/engines/pulumi-kubernetes" && go mod download -json "$pk8s" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
pk8s_version=4.25.0  # the release tag of the pinned pseudo-version's commit (f47bc2d6f199 = v4.25.0)
say "pulumi-resource-kubernetes $pk8s_version"
rm -rf "$cache/src/pulumi-kubernetes"
mkdir -p "$cache/src"
cp -r "$pk8s_dir" "$cache/src/pulumi-kubernetes"
chmod -R u+w "$cache/src/pulumi-kubernetes"
(cd "$cache/src/pulumi-kubernetes" \
  && go mod edit -dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4 \
  && cd cmd/pulumi-resource-kubernetes \
  && VERSION="$pk8s_version" GOFLAGS="-buildvcs=false -mod=mod" go run generate.go \
  && GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath \
       -ldflags "-s -w -X $pk8s/pkg/version.Version=$pk8s_version" -o "$bin/pulumi-resource-kubernetes" .)
rm -rf "$cache/src"

# Karpenter's modules need a newer Go than 1.26.8; the go command fetches that toolchain from the module proxy.
for modfile in go.mod $(cd "$root/engines/karpenter-scheduler" && ls karpenter-v*.mod); do
  tag=${modfile#karpenter-}
  tag=${tag%.mod}
  suffix=""
  [ "$modfile" = go.mod ] || suffix="-$tag"
  for program in karpenter-crds karpenter-scheduler; do
    [ -f "$root/engines/$program/$modfile" ] || { say "engines/$program/$modfile is missing"; exit 1; }
  done
  provider=$(cd "$root/engines/karpenter-crds" && GOTOOLCHAIN=go1.27.3 go list -modfile="$modfile" -m -f '{{.Version}}' github.com/aws/karpenter-provider-aws)
  say "karpenter CRDs and DRA device metadata $provider"
  (cd "$root/engines/karpenter-crds" && GOTOOLCHAIN=go1.27.3 go build -modfile="$modfile" -trimpath -ldflags "-s -w" -o "$bin/karpenter-crds$suffix" .)
  "$bin/karpenter-crds$suffix" "$cache/karpenter$suffix"
  core=$(cd "$root/engines/karpenter-scheduler" && GOTOOLCHAIN=go1.27.3 go list -modfile="$modfile" -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' sigs.k8s.io/karpenter)
  say "karpenter provisioning scheduler $core with the AWS provider $provider"
  (cd "$root/engines/karpenter-scheduler" && GOTOOLCHAIN=go1.27.3 go build -modfile="$modfile" -trimpath -ldflags "-s -w" -o "$bin/karpenter-scheduler$suffix" .)
done

touch "$cache/complete"
say "built in $((SECONDS - started)) s into $cache"
echo "$bin"
