"""kernel_family: one implementation family of kernels = one cc_library + a manifest.

The manifest (<name>_manifest.json) names the family and the sources that implement it;
the kernel inventory reads it to fingerprint the family and find its ParallelFor call
sites, so the inventory is derived from the build rather than kept by hand.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

def _family_manifest_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode({
        "family": ctx.attr.family,
        "package": ctx.label.package,
        "label": "//%s:%s" % (ctx.label.package, ctx.attr.family),
        "sources": sorted([f.short_path for f in ctx.files.srcs]),
    }))
    return [DefaultInfo(
        files = depset([out]),
        runfiles = ctx.runfiles(files = [out] + ctx.files.srcs),
    )]

family_manifest = rule(
    implementation = _family_manifest_impl,
    attrs = {
        "family": attr.string(mandatory = True),
        "srcs": attr.label_list(allow_files = True),
    },
)

def family_manifest_label(family_label):
    """The manifest target of a family label; accepts the short form "//pkg/name"."""
    if ":" not in family_label:
        family_label = family_label + ":" + family_label.split("/")[-1]
    return family_label + "_manifest"

def kernel_family(name, srcs, hdrs = [], deps = [], copts = [], **kwargs):
    """A family's kernels: registered at start-up (alwayslink), with its manifest."""
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        copts = copts,
        alwayslink = True,
        deps = deps + [
            "//native/core",
            "//native/executor",
            "//native/registry",
            "//native/tuning:schema",
        ],
        visibility = ["//visibility:public"],
        **kwargs
    )
    family_manifest(
        name = name + "_manifest",
        family = name,
        srcs = srcs + hdrs,
        visibility = ["//visibility:public"],
    )
