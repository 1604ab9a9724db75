"""optimized_file: a file built in the optimised, portable configuration the wheel ships.

The wheel is the product: whatever the command line carries (fastbuild, dbg, a stray
--copt=-O0, a host-specific -march, sanitizer flags), the extension inside it is compiled the
way .bazelrc's default build compiles it. Since that default is the same configuration,
`./bazelw build //python:wheel`, the Python tests and every benchmark share one build of
the extension (the transition changes nothing there, so Bazel adds no output directory).
"""

# Exactly the compile flags of .bazelrc's default build (keep the two in step; a
# difference would build the native tree twice).
OPT_COMPILATION_MODE = "opt"
OPT_COPTS = ["-Wall", "-Wno-sign-compare", "-O3"]
OPT_CXXOPTS = ["-std=c++17"]

def _optimized_transition_impl(settings, attr):
    return {
        "//command_line_option:compilation_mode": OPT_COMPILATION_MODE,
        "//command_line_option:copt": OPT_COPTS,
        "//command_line_option:cxxopt": OPT_CXXOPTS,
        "//command_line_option:conlyopt": [],
        "//command_line_option:linkopt": [],
    }

_optimized_transition = transition(
    implementation = _optimized_transition_impl,
    inputs = [],
    outputs = [
        "//command_line_option:compilation_mode",
        "//command_line_option:copt",
        "//command_line_option:cxxopt",
        "//command_line_option:conlyopt",
        "//command_line_option:linkopt",
    ],
)

def _optimized_file_impl(ctx):
    src = ctx.attr.src
    if type(src) == "list":  # an attribute with a transition may come as a list of one
        src = src[0]
    files = src[DefaultInfo].files.to_list()
    if len(files) != 1:
        fail("optimized_file: %s gives %d files, expected one" % (src.label, len(files)))
    out = ctx.actions.declare_file(ctx.attr.out)
    ctx.actions.symlink(output = out, target_file = files[0])
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

optimized_file = rule(
    implementation = _optimized_file_impl,
    doc = "`out` is `src` built in the optimised configuration (see the file's docstring).",
    attrs = {
        "src": attr.label(mandatory = True, cfg = _optimized_transition),
        "out": attr.string(mandatory = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
