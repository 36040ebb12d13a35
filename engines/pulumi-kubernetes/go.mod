module eks-devices.invalid/engines/pulumi-kubernetes

go 1.26

require github.com/pulumi/pulumi-kubernetes/provider/v4 v4.0.0-20260115033456-f47bc2d6f199
