"""The network a cluster stands on: a VPC with a public and a private subnet per zone, NAT and
routes, or a VPC the user brings; and the EFA security group every EFA interface carries.

Nodes live in private subnets (multi-ENI EFA nodes get no public IP, EKS User Guide EFA page), whose default
route goes through NAT. Private subnets and the EFA security group carry the discovery tag
`karpenter.sh/discovery=<cluster>` that Auto Mode NodeClasses and Karpenter EC2NodeClasses select on;
the EFA group also carries its role (`names.SECURITY_GROUP_TAG`), so that only EFA pools select it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
from pydantic import ValidationError

from eks_devices import answers, identity
from eks_devices.core.config import stack as specs
from eks_devices.core.config.errors import from_validation
from eks_devices.core.config.subnets import pick_zones, subnet_layout
from eks_devices.core.names import DISCOVERY_TAG, EFA_SECURITY_GROUP, NETWORK_TYPE, SECURITY_GROUP_TAG
from eks_devices.inputs import Problem, name_problems, reject

PUBLIC_ELB_TAG = "kubernetes.io/role/elb"
INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb"


@dataclass(frozen=True)
class NetworkArgs:
    """What the network takes.

    - `cluster_name`: the EKS cluster's name, the value of the `karpenter.sh/discovery` tag on the
      private subnets and the EFA security group;
    - `config`: the `eks-devices:network` section (a mapping in the stack file's camelCase keys, or
      the validated model): a CIDR and zones to create, or a VPC to bring;
    - `tags`: AWS tags on everything created;
    - `required_zones`: zones node pools are pinned to; a VPC created from a zone count takes them
      first and fills up with the region's other zones;
    - `protect`: the VPC and subnets are protected (Pulumi refuses to delete or replace them).
    """

    cluster_name: str
    config: specs.Network | Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    required_zones: Sequence[str] = ()
    protect: bool = True

    def validated(self, extra: Sequence[Problem] = ()) -> specs.Network:
        """The network configuration, or InputPropertiesError naming every problem (`extra` too: the
        component's name's)."""
        problems: list[Problem] = list(extra)
        if not isinstance(self.cluster_name, str) or not self.cluster_name:
            problems.append(("clusterName", f"given {self.cluster_name!r}; accepted: the EKS cluster's name"))
        network = self.config
        if not isinstance(network, specs.Network):
            try:
                network = specs.Network.model_validate(dict(network))
            except (ValidationError, TypeError, ValueError) as exc:
                found = from_validation(exc, "config.", specs.Network) if isinstance(exc, ValidationError) else []
                problems.extend((p.path, f"given {p.given}; accepted: {p.accepted}") for p in found)
                if not found:
                    problems.append(("config", f"given {network!r}; accepted: a mapping of network settings"))
        if problems:
            reject("Network", problems)
        assert isinstance(network, specs.Network)
        return network


def network_reads(network: specs.Network) -> list[tuple[answers.Read, dict[str, Any]]]:
    """What the network asks AWS (answered by mocks in unit tests): zones for a count, brought subnets' zones."""
    if network.vpc_id:
        return [(answers.SUBNET, {"id": sid}) for sid in [*network.private_subnet_ids, *network.public_subnet_ids][:1]]
    if isinstance(network.availability_zones, int):
        return [(answers.AVAILABILITY_ZONES, {"state": "available"})]
    return []


class Network(pulumi.ComponentResource):
    """A VPC across availability zones (created or brought) and the EFA security group."""

    pulumi_type = NETWORK_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    public_subnet_ids: pulumi.Output[list[str]]
    private_subnets_by_zone: pulumi.Output[dict[str, str]]
    public_subnets_by_zone: pulumi.Output[dict[str, str]]
    efa_security_group_id: pulumi.Output[str]
    availability_zones: pulumi.Output[list[str]]
    # what gives the created subnets their way out (routes and route-table associations): nodes
    # launched into them wait for it, since they pull images and join through it; empty for a brought VPC
    private_egress: list[pulumi.Resource]
    public_egress: list[pulumi.Resource]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        network = args.validated(name_problems(name))
        answers.check_mocks("Network", network_reads(network))
        super().__init__(NETWORK_TYPE, name, None, opts)
        self._name = name
        self._required = sorted(set(args.required_zones))
        self._cluster_name = args.cluster_name
        self._tags = dict(args.tags)
        self._child = pulumi.ResourceOptions(parent=self)
        # what cannot be recreated without taking the cluster down with it
        self._stateful = pulumi.ResourceOptions(parent=self, protect=args.protect)
        if network.vpc_id:
            self._bring(network)
        else:
            self._create(network)
        self.efa_security_group_id = self._efa_security_group()
        self.register_outputs({
            "vpcId": self.vpc_id, "privateSubnetIds": self.private_subnet_ids,
            "publicSubnetIds": self.public_subnet_ids, "privateSubnetsByZone": self.private_subnets_by_zone,
            "publicSubnetsByZone": self.public_subnets_by_zone,
            "efaSecurityGroupId": self.efa_security_group_id, "availabilityZones": self.availability_zones,
        })

    def _tagged(self, name: str, **extra: str) -> dict[str, str]:
        return {**self._tags, "Name": name, **extra}

    def _zones(self, network: specs.Network) -> pulumi.Output[list[str]]:
        if isinstance(network.availability_zones, list):
            return pulumi.Output.from_input(list(network.availability_zones))
        count = network.availability_zones
        found = aws.get_availability_zones_output(
            state="available", filters=[{"name": "opt-in-status", "values": ["opt-in-not-required"]}],
            opts=pulumi.InvokeOutputOptions(parent=self))

        required = self._required

        def first(names: list[str] | None) -> list[str]:
            names = answers.answered(answers.AVAILABILITY_ZONES, "names", names)
            if len(names) < count:
                raise pulumi.RunError(f"network.availabilityZones asks for {count} zones; the region has "
                                      f"{len(names)} ({', '.join(names)})")
            missing = [z for z in required if z not in names]
            if missing:
                raise pulumi.RunError(f"node pools are pinned to {', '.join(missing)}, which the region does not "
                                      f"offer without opt-in (it offers {', '.join(sorted(names))})")
            return pick_zones(names, required, count)

        return found.names.apply(first)

    def _slots(self, network: specs.Network) -> list[tuple[str, int, str | None]]:
        """Per zone, in slot order: the key its resources are named by, its slot in the CIDR layout,
        and the key they had when subnets were keyed by position. Listed zones are keyed by name
        and take the slot of their place in name order, so reordering the list keeps every subnet
        and CIDR, and a zone added after the others in name order keeps the existing ones; a zone
        count keeps position keys (the zones are the region's first in name order, unknown until
        deploy), which adding zones only extends."""
        if isinstance(network.availability_zones, int):
            return [(str(i), i, None) for i in range(network.availability_zones)]
        listed = list(network.availability_zones)
        return [(zone, slot, str(listed.index(zone))) for slot, zone in enumerate(sorted(listed))]

    def _create(self, network: specs.Network) -> None:
        name, child, stateful = self._name, self._child, self._stateful
        try:
            layout = subnet_layout(network.cidr, network.zone_count)
        except ValueError as exc:
            raise pulumi.RunError(str(exc)) from None
        zones = self._zones(network)
        label = self._cluster_name
        vpc = aws.ec2.Vpc(f"{name}-vpc", cidr_block=network.cidr, enable_dns_hostnames=True,
                          enable_dns_support=True, tags=self._tagged(f"{label}-vpc"), opts=stateful)
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=self._tagged(f"{label}-igw"), opts=child)
        public_rt = aws.ec2.RouteTable(f"{name}-public-rt", vpc_id=vpc.id, tags=self._tagged(f"{label}-public"),
                                       opts=child)
        self.public_egress = [aws.ec2.Route(f"{name}-public-default", route_table_id=public_rt.id,
                                            destination_cidr_block="0.0.0.0/0", gateway_id=igw.id, opts=child)]
        self.private_egress = []
        slots = self._slots(network)
        public, private = [], []
        for key, slot, was in slots:
            private_cidr, public_cidr = layout[slot]
            zone = pulumi.Output.from_input(key) if was is not None else zones.apply(lambda z, i=slot: z[i])
            pub = aws.ec2.Subnet(f"{name}-public-{key}", vpc_id=vpc.id, cidr_block=public_cidr,
                                 availability_zone=zone, map_public_ip_on_launch=True,
                                 tags=self._tagged(f"{label}-public-{key}", **{PUBLIC_ELB_TAG: "1"}),
                                 opts=self._was(stateful, f"public-{key}", was and f"public-{was}"))
            self.public_egress.append(aws.ec2.RouteTableAssociation(
                f"{name}-public-{key}-rta", subnet_id=pub.id, route_table_id=public_rt.id,
                opts=self._was(child, f"public-{key}-rta", was and f"public-{was}-rta")))
            priv = aws.ec2.Subnet(f"{name}-private-{key}", vpc_id=vpc.id, cidr_block=private_cidr,
                                  availability_zone=zone, map_public_ip_on_launch=False,
                                  tags=self._tagged(f"{label}-private-{key}", **{INTERNAL_ELB_TAG: "1",
                                                                                DISCOVERY_TAG: self._cluster_name}),
                                  opts=self._was(stateful, f"private-{key}", was and f"private-{was}"))
            public.append(pub)
            private.append(priv)
        nats = self._nat_gateways(network, slots, public, igw)
        for (key, _, was), subnet in zip(slots, private, strict=True):
            rt = aws.ec2.RouteTable(f"{name}-private-{key}-rt", vpc_id=vpc.id,
                                    tags=self._tagged(f"{label}-private-{key}"),
                                    opts=self._was(child, f"private-{key}-rt", was and f"private-{was}-rt"))
            if nats:
                self.private_egress.append(aws.ec2.Route(
                    f"{name}-private-{key}-default", route_table_id=rt.id, destination_cidr_block="0.0.0.0/0",
                    nat_gateway_id=nats.get(key, nats[slots[0][0]]).id,
                    opts=self._was(child, f"private-{key}-default", was and f"private-{was}-default")))
            self.private_egress.append(aws.ec2.RouteTableAssociation(
                f"{name}-private-{key}-rta", subnet_id=subnet.id, route_table_id=rt.id,
                opts=self._was(child, f"private-{key}-rta", was and f"private-{was}-rta")))
        self.vpc_id = vpc.id
        self.availability_zones = zones
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public])
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private])
        in_slot_order = zones if isinstance(network.availability_zones, int) else pulumi.Output.from_input(
            [key for key, _, _ in slots])
        self.private_subnets_by_zone = pulumi.Output.all(in_slot_order, self.private_subnet_ids).apply(
            lambda args: dict(zip(args[0], args[1], strict=True)))
        self.public_subnets_by_zone = pulumi.Output.all(in_slot_order, self.public_subnet_ids).apply(
            lambda args: dict(zip(args[0], args[1], strict=True)))

    def _was(self, opts: pulumi.ResourceOptions, key: str, old_key: str | None) -> pulumi.ResourceOptions:
        """`opts` with an alias from the position-keyed name the resource had (when it differs)."""
        if not old_key or old_key == key:
            return opts
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
            aliases=identity.aliases(f"{self._name}-{old_key}")))

    def _nat_gateways(self, network: specs.Network, slots: list[tuple[str, int, str | None]],
                      public: list[aws.ec2.Subnet], igw: aws.ec2.InternetGateway) -> dict[str, aws.ec2.NatGateway]:
        """One NAT gateway per zone (`one-per-az`), one in the first zone in slot order (`single`), or
        none; by zone key."""
        count = {"one-per-az": len(public), "single": 1, "none": 0}[network.nat_gateways]
        nats = {}
        for (key, _, was), subnet in list(zip(slots, public, strict=True))[:count]:
            eip = aws.ec2.Eip(f"{self._name}-nat-{key}-eip", domain="vpc",
                              tags=self._tagged(f"{self._cluster_name}-nat-{key}"),
                              opts=self._was(self._child, f"nat-{key}-eip", was and f"nat-{was}-eip"))
            nats[key] = aws.ec2.NatGateway(
                f"{self._name}-nat-{key}", allocation_id=eip.id, subnet_id=subnet.id,
                tags=self._tagged(f"{self._cluster_name}-nat-{key}"),
                opts=self._was(pulumi.ResourceOptions(parent=self, depends_on=[igw]), f"nat-{key}",
                               was and f"nat-{was}"))
        return nats

    def _bring(self, network: specs.Network) -> None:
        """Use the user's VPC: zones come from EC2, and the private subnets get the discovery tag."""
        assert network.vpc_id is not None  # _bring is only called with a brought VPC
        self.private_egress, self.public_egress = [], []  # the brought VPC's routes are the team's
        self.vpc_id = pulumi.Output.from_input(network.vpc_id)
        self.private_subnet_ids = pulumi.Output.from_input(list(network.private_subnet_ids))
        self.public_subnet_ids = pulumi.Output.from_input(list(network.public_subnet_ids))
        for i, sid in enumerate(network.private_subnet_ids):
            aws.ec2.Tag(f"{self._name}-private-{i}-discovery", resource_id=sid, key=DISCOVERY_TAG,
                        value=self._cluster_name, opts=self._child)
        self.private_subnets_by_zone = self._by_zone(network.private_subnet_ids)
        self.public_subnets_by_zone = self._by_zone(network.public_subnet_ids)
        self.availability_zones = self.private_subnets_by_zone.apply(lambda found: sorted(found))

    def _by_zone(self, subnet_ids: list[str]) -> pulumi.Output[dict[str, str]]:
        """Brought subnets by the zone EC2 reports for them (the first subnet of a zone serves it)."""
        zones = [aws.ec2.get_subnet_output(id=sid, opts=pulumi.InvokeOutputOptions(parent=self)).availability_zone
                 .apply(lambda zone: answers.answered(answers.SUBNET, "availabilityZone", zone)) for sid in subnet_ids]

        def by_zone(found: list[str]) -> dict[str, str]:
            out: dict[str, str] = {}
            for zone, sid in zip(found, subnet_ids, strict=True):
                out.setdefault(zone, sid)
            return out

        return pulumi.Output.all(*zones).apply(by_zone)

    def _efa_security_group(self) -> pulumi.Output[str]:
        """All traffic to and from itself, both directions, as eksctl (`EFAIngressSelf`/`EFAEgressSelf`) and
        terraform-aws-eks v21.19.0 (`all_self_efa`) do: egress to 0.0.0.0/0 is not enough."""
        sg = aws.ec2.SecurityGroup(
            f"{self._name}-{EFA_SECURITY_GROUP}", vpc_id=self.vpc_id,
            description="EFA: all traffic between interfaces that carry this group",
            tags=self._tagged(f"{self._cluster_name}-{EFA_SECURITY_GROUP}",
                              **{DISCOVERY_TAG: self._cluster_name, SECURITY_GROUP_TAG: EFA_SECURITY_GROUP}),
            opts=self._child)
        aws.vpc.SecurityGroupIngressRule(f"{self._name}-{EFA_SECURITY_GROUP}-ingress-self", security_group_id=sg.id,
                                         ip_protocol="-1", referenced_security_group_id=sg.id,
                                         description="EFA: all traffic from this group", opts=self._child)
        aws.vpc.SecurityGroupEgressRule(f"{self._name}-{EFA_SECURITY_GROUP}-egress-self", security_group_id=sg.id,
                                        ip_protocol="-1", referenced_security_group_id=sg.id,
                                        description="EFA: all traffic to this group", opts=self._child)
        return sg.id
