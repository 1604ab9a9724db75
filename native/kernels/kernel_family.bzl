"""kernel_family: one implementation family of kernels = one cc_library + a manifest.

The manifest (<name>_manifest.json) names the family and the sources that implement it;
the kernel inventory reads it to fingerprint the family and find its ParallelFor call
sites, so the inventory is derived from the build rather than kept by hand. Sources of
the kernel helper libraries the family depends on (anything under native/kernels reached
through `deps`, e.g. the GEMM engine under Conv) are listed as `shared_sources`: they
change the family's fingerprint, so an exemption is re-reviewed when code it runs changes.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

_KERNELS_PACKAGE = "native/kernels"

KernelSourcesInfo = provider(
    doc = "Sources of cc_library targets under native/kernels, transitively through deps.",
    fields = ["files"],
)

def _kernel_sources_aspect_impl(target, ctx):
    direct = []
    if ctx.label.workspace_root == "" and ctx.label.package.startswith(_KERNELS_PACKAGE):
        for attr in ("srcs", "hdrs"):
            direct += getattr(ctx.rule.files, attr, [])
    transitive = [dep[KernelSourcesInfo].files for dep in getattr(ctx.rule.attr, "deps", []) if KernelSourcesInfo in dep]
    return [KernelSourcesInfo(files = depset(direct, transitive = transitive))]

kernel_sources_aspect = aspect(
    implementation = _kernel_sources_aspect_impl,
    attr_aspects = ["deps"],
)

def _family_manifest_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    own = {f.short_path: True for f in ctx.files.srcs}
    shared = [
        f
        for dep in ctx.attr.deps
        for f in dep[KernelSourcesInfo].files.to_list()
        if f.short_path not in own
    ]
    ctx.actions.write(out, json.encode({
        "family": ctx.attr.family,
        "package": ctx.label.package,
        "label": "//%s:%s" % (ctx.label.package, ctx.attr.family),
        "sources": sorted(own.keys()),
        "shared_sources": sorted({f.short_path: True for f in shared}.keys()),
    }))
    return [DefaultInfo(
        files = depset([out]),
        runfiles = ctx.runfiles(files = [out] + ctx.files.srcs + shared),
    )]

family_manifest = rule(
    implementation = _family_manifest_impl,
    attrs = {
        "family": attr.string(mandatory = True),
        "srcs": attr.label_list(allow_files = True),
        "deps": attr.label_list(aspects = [kernel_sources_aspect]),
    },
)

def family_manifest_label(family_label):
    """The manifest target of a family label; accepts the short form "//pkg/name"."""
    if ":" not in family_label:
        family_label = family_label + ":" + family_label.split("/")[-1]
    return family_label + "_manifest"

def kernel_family(name, srcs, hdrs = [], deps = [], copts = [], local_defines = [], **kwargs):
    """A family's kernels: registered at start-up (alwayslink), with its manifest.

    The sources are compiled with OL_KERNEL_FAMILY="<name>": Kernel(op)
    (native/kernels/common/kernel_registration.h) registers under it, so the family name
    a registration carries is the Bazel name the inventory finds.
    """
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        copts = copts,
        local_defines = local_defines + ['OL_KERNEL_FAMILY=\\"%s\\"' % name],
        alwayslink = True,
        deps = deps + [
            "//native/core",
            "//native/executor",
            "//native/kernels/common:isa_variants",
            "//native/kernels/common:kernel_registration",
            "//native/kernels/common:type_dispatch",
            "//native/registry",
            "//native/tuning:schema",
        ],
        visibility = ["//native:kernels_and_above"],
        **kwargs
    )
    family_manifest(
        name = name + "_manifest",
        family = name,
        srcs = srcs + hdrs,
        deps = deps,
        visibility = ["//native:kernels_and_above"],
    )

# Compiler flags per ISA level (native/core/cpu_features.h's Isa). kAvx2 is AVX2 + FMA +
# F16C (every AVX2 CPU has the other two); kAvx512 adds F, BW, DQ and VL. NEON is the
# aarch64 baseline: no flags.
ISA_COPTS = {
    "avx2": ["-mavx2", "-mfma", "-mf16c"],
    "avx512": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl"],
    "neon": [],
}

_ISA_ARCH = {
    "avx2": "//native/kernels/common:x86_64",
    "avx512": "//native/kernels/common:x86_64",
    "neon": "//native/kernels/common:aarch64",
}

def isa_library(name, isa, srcs, hdrs = [], deps = [], copts = [], **kwargs):
    """One ISA level's sources of a SIMD primitive, compiled with that level's flags.

    Comes with <name>_linkage_test: the archive may define no symbol with vague linkage
    (an inline function compiled with these flags could be the copy every caller gets).
    The flags apply only when building for the ISA's architecture; elsewhere the sources
    compile without them (they are guarded by #if defined(__x86_64__) / __aarch64__ and
    then empty). The sources carry no `#pragma GCC target` or target attributes, and are
    reached only after IsaEnabled() (native/kernels/common/isa_variants.h). Depend on it
    from the primitive's library; its sources count as that library's shared sources in
    family manifests like any other helper under native/kernels.
    """
    if isa not in ISA_COPTS:
        fail("isa_library %s: isa must be one of %s" % (name, sorted(ISA_COPTS.keys())))
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps,
        copts = copts + select({
            _ISA_ARCH[isa]: ISA_COPTS[isa],
            "//conditions:default": [],
        }),
        **kwargs
    )

    # No symbol with vague linkage in the ISA-flagged archive (check_isa_linkage.sh).
    # x86-64 only: the aarch64 config runs tests under qemu, which cannot run a script.
    # (A filegroup, so that the archive itself is among the test's runfiles.)
    native.filegroup(
        name = name + "_outputs",
        srcs = [":" + name],
        visibility = ["//visibility:private"],
    )
    native.sh_test(
        name = name + "_linkage_test",
        size = "small",
        srcs = ["//native/kernels/common:check_isa_linkage.sh"],
        args = ["$(locations :%s_outputs)" % name],
        data = [":%s_outputs" % name],
        target_compatible_with = ["@platforms//cpu:x86_64"],
    )
