"""pulumi-policy's analyzer servicer, with what it rebuilds for every policy built once per request.

`_PolicyAnalyzerServicer.Analyze` (pulumi-policy 1.21.0, pinned) decodes a resource's options and provider again
for every resource policy, and `AnalyzeStack` rebuilds every resource of the stack (its view, options, provider,
parent and dependency links) again for every stack policy: O(resources x policies), most of a 20,000-resource
export's time. `SharedServicer` overrides those two methods only, with the same steps in the same order, except
that what depends on the request alone is built once and handed to every policy: the policies only read what they
are given; and Analyze leaves out, for a resource type, the resource policies that read nothing of a resource of
that type and report nothing on it (learnt once per type by probing each policy: policies/type_index.py), which is
what they would do there. Enforcement levels, not-applicable reports, the "can't run during preview" diagnostic on
an unknown value, and the violations are pulumi-policy's own code paths (`_create_report_violation`,
`_get_policy_config`, the policies' `validate`). A runner may leave the requests' properties out and hand `analyze` and
`analyze_stack` what the servicer would decode from them (accelstack.engine.struct_decode.decoded, read from the
export), decoded or failing at the same point. tests/policies/test_policy_large_exports.py holds the responses equal
to the stock servicer's on every shipped stack and on large exports with planted violations.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from inspect import isawaitable
from typing import Any

from pulumi.runtime import proto
from pulumi_policy.policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
    UnknownValueError,
    _NotApplicableError,
    _PolicyAnalyzerServicer,
)

from accelstack.engine.struct_decode import Decoded

_last_stack: list[tuple[Any, list[Any]]] = []  # (AnalyzeStackRequest, its resources)
_BASE = "_PolicyAnalyzerServicer__"  # the private attributes pulumi-policy's servicer keeps (name-mangled)


def _deserialized(request: Any, properties: Decoded | None) -> Any:
    """The request's properties as pulumi-policy's servicer deserializes them, or as a runner decoded them."""
    if properties is not None:
        return properties.value()
    from pulumi_policy import policy as stock  # its decoder, as the runner may have swapped it

    return stock.deserialize_properties(stock.json_format.MessageToDict(request.properties))


class SharedServicer(_PolicyAnalyzerServicer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plan: list[tuple[Any, Any, Any, frozenset[str] | None]] | None = None

    def _private(self, name: str) -> Any:
        return getattr(self, _BASE + name)

    def Configure(self, request: Any, context: Any) -> Any:  # noqa: N802  # the gRPC method's name
        self._configs: dict[str, Any] = {}
        self._providers: dict[bytes, Any] = {}
        self._by_kind: dict[tuple[str, int], tuple[Any, list[Any]]] = {}
        self._plan = None
        return super().Configure(request, context)  # type: ignore[no-untyped-call]  # pulumi-policy is unannotated

    def _get_policy_config(self, name: str) -> Any:
        """A policy's config, one copy for all its calls (the packs' policies copy it before use): the packs keep
        what they derive from it (policies.common.make_context) by its identity."""
        configs = self.__dict__.setdefault("_configs", {})
        if name not in configs:
            configs[name] = super()._get_policy_config(name)
        return configs[name]

    def _get_provider_resource(self, request: Any) -> Any:
        """One provider resource for every request that names the same provider (its props decoded once, and what
        the packs read of it kept by its identity: policies.common._facts_of)."""
        if not request.HasField("provider"):
            return None
        providers = self.__dict__.setdefault("_providers", {})
        key = request.provider.SerializeToString(deterministic=True)
        if key not in providers:
            providers[key] = super()._get_provider_resource(request)
        return providers[key]

    def _run(self, policy: Any, validate: Any, response: Any) -> None:
        """pulumi-policy's call of one policy: awaited when it returns an awaitable, an unknown value reported as
        the advisory "can't run during preview", a not-applicable policy recorded as such."""
        try:
            result = validate()
            if result is not None and isawaitable(result):
                loop = asyncio.new_event_loop()
                task: asyncio.Task[Any] = asyncio.Task(result, loop=loop)  # type: ignore[arg-type]  # pulumi-policy's
                loop.run_until_complete(task)
                loop.close()
        except UnknownValueError as e:
            name, version = self._private("policy_pack_name"), self._private("policy_pack_version")
            response.diagnostics.append(
                proto.AnalyzeDiagnostic(
                    policyName=policy.name,
                    policyPackName=name,
                    policyPackVersion=version,
                    message=(
                        f"can't run policy '{policy.name}' from policy pack '{name}@v{version}' during preview: {e.message}"
                    ),
                    urn="",
                    description=policy.description,
                    enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY),
                )
            )
        except _NotApplicableError as e:
            response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=e.reason or ""))

    def _resource_plan(self) -> list[tuple[Any, Any, Any, frozenset[str] | None]]:
        """The resource policies Analyze runs, each with what depends on the configuration alone (its enforcement
        level, its config, the resource types it reads), found once per Configure, not once per resource: (policy,
        level, config, types), or (policy, None, None, None) for one without validate."""
        if self._plan is not None:
            return self._plan
        plan: list[tuple[Any, Any, Any, frozenset[str] | None]] = []
        for policy in self._private("policies"):
            enforcement_level = self._get_enforcement_level(policy)
            if enforcement_level == EnforcementLevel.DISABLED or not isinstance(policy, ResourceValidationPolicy):
                continue
            if not policy.has_validation():
                plan.append((policy, None, None, None))
                continue
            if enforcement_level == EnforcementLevel.REMEDIATE:
                enforcement_level = EnforcementLevel.MANDATORY
            # A policy made by policies.common.resource_policy(types=...) returns at once on any other type.
            types = getattr(policy, "types", None)
            # No config reads as {}: one per policy, as a configured policy's one config (ResourceValidationArgs
            # would make a fresh {} per resource, and the packs' contexts are kept by the config's identity).
            config = self._get_policy_config(policy.name)
            plan.append((policy, enforcement_level, {} if config is None else config, types))
        self._plan = plan
        return plan

    def _plan_for(self, resource_type: str, provider: Any) -> list[tuple[Any, Any, Any, frozenset[str] | None]]:
        """The resource plan less the policies that would return without reading or reporting anything on a resource
        of this type under this provider (a policy's `skips`, policies.common.resource_policy: learnt by probing the
        policy itself, policies/type_index.py), found once per type and provider, not once per resource."""
        by_kind = self.__dict__.setdefault("_by_kind", {})
        key = (resource_type, id(provider))
        held = by_kind.get(key)
        if held is not None and held[0] is provider:
            return held[1]  # type: ignore[no-any-return]
        kept = []
        for entry in self._resource_plan():
            policy, enforcement_level, config, types = entry
            skips = getattr(policy, "skips", None) if enforcement_level is not None else None
            if types is not None and resource_type not in types:
                continue  # the policy would return without reading or reporting anything
            if skips is not None and skips(resource_type, provider, config):
                continue
            kept.append(entry)
        by_kind[key] = (provider, kept)  # the provider held, so that its id stays its own
        return kept

    def Analyze(self, request: Any, _context: Any) -> Any:  # noqa: N802  # the gRPC method's name
        return self.analyze(request)

    def analyze(self, request: Any, properties: Decoded | None = None) -> Any:
        """`Analyze`; `properties`: what it would decode from `request.properties` (read from the export:
        accelstack.engine.struct_decode.decoded), from a runner that left them out of the request."""
        self._configure_runtime_settings()  # type: ignore[no-untyped-call]
        response = proto.AnalyzeResponse()
        plan = self._resource_plan()
        if not plan:
            return response
        from pulumi_policy import policy as stock  # its decoder, as the runner may have swapped it

        # Decoded before the first policy, as pulumi-policy does (a property it cannot decode fails the same way).
        props = stock.unknown_checking_proxy(_deserialized(request, properties))
        opts, provider = self._get_resource_options(request), self._get_provider_resource(request)
        resource_type, urn, name, tags = request.type, request.urn, request.name, self._private("stack_tags")
        for policy, enforcement_level, config, _ in self._plan_for(resource_type, provider):
            if enforcement_level is None:
                reason = "Policy does not implement validate"
                response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=reason))
                continue
            # Made just before the policy runs, as pulumi-policy does (the schema report's trace learns from it
            # which policy is reading).
            report_violation = self._create_report_violation(
                response, policy.name, policy.description, enforcement_level, policy.severity
            )
            args = ResourceValidationArgs(resource_type, props, urn, name, opts, provider, config, tags)
            self._run(policy, lambda: policy.validate(args, report_violation), response)  # noqa: B023  # called now
        return response

    def _stack_resources(self, request: Any, properties: Sequence[Decoded] | None) -> list[Any]:
        """AnalyzeStack's resources, each with its parent and dependencies linked, as pulumi-policy builds them;
        built once per request for every pack's servicer (the last request's kept, held so its id stays its own)."""
        if _last_stack and _last_stack[0][0] is request:
            return _last_stack[0][1]
        resources = self._build_stack_resources(request, properties)
        _last_stack[:] = [(request, resources)]
        return resources

    def _build_stack_resources(self, request: Any, properties: Sequence[Decoded] | None) -> list[Any]:
        from pulumi_policy import policy as stock

        intermediates = []
        for index, r in enumerate(request.resources):
            props = stock.unknown_checking_proxy(_deserialized(r, None if properties is None else properties[index]))
            resource = PolicyResource(
                r.type,
                props,
                r.urn,
                r.name,
                self._get_resource_options(r),
                self._get_provider_resource(r),
                None,
                [],
                {},
            )
            property_dependencies = {k: list(v.urns) for k, v in r.propertyDependencies.items()}
            intermediates.append((resource, r.parent, list(r.dependencies), property_dependencies))
        by_urn = {resource.urn: resource for resource, _, _, _ in intermediates}
        for resource, parent, dependencies, property_dependencies in intermediates:
            if parent is not None and parent in by_urn:
                resource.parent = by_urn[parent]
            resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            for key, urns in property_dependencies.items():
                resource.property_dependencies[key] = [by_urn[d] for d in urns if d in by_urn]
        return [resource for resource, _, _, _ in intermediates]

    def AnalyzeStack(self, request: Any, _context: Any) -> Any:  # noqa: N802  # the gRPC method's name
        return self.analyze_stack(request)

    def analyze_stack(self, request: Any, properties: Sequence[Decoded] | None = None) -> Any:
        """`AnalyzeStack`; `properties`: what it would decode from each resource's properties, in order (`analyze`)."""
        self._configure_runtime_settings()  # type: ignore[no-untyped-call]
        response = proto.AnalyzeResponse()
        resources: list[Any] | None = None
        for policy in self._private("policies"):
            enforcement_level = self._get_enforcement_level(policy)
            if enforcement_level == EnforcementLevel.DISABLED or not isinstance(policy, StackValidationPolicy):
                continue
            if enforcement_level == EnforcementLevel.REMEDIATE:
                enforcement_level = EnforcementLevel.MANDATORY
            report_violation = self._create_report_violation(
                response, policy.name, policy.description, enforcement_level, policy.severity
            )
            if resources is None:
                resources = self._stack_resources(request, properties)
            config = self._get_policy_config(policy.name)
            # One list for every stack policy, so that what the packs build once per stack (the access graph, the
            # reachability view: `policies.access.once_per_stack`) is built once, not once per policy.
            args = StackValidationArgs(resources, config, self._private("stack_tags"))
            self._run(policy, lambda: policy.validate(args, report_violation), response)  # noqa: B023  # called now
        return response
