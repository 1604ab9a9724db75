from onnx_light_dev import fingerprint

CODE = """// Adds two tensors.
#include "a.h"
/* Block comment
   over lines. */
Status Add::Compute(KernelContext& ctx) {
  const char* label = "x // not a comment /* nor this */";
  return ParallelFor(ctx.parallel(), n, ParallelPlan{"add", 64}, Body);  // the region
}
"""


def test_comments_and_whitespace_do_not_change_the_fingerprint():
    reformatted = (
        CODE.replace("// Adds two tensors.", "// Sums.")
        .replace("/* Block comment\n   over lines. */", "")
        .replace("  return ParallelFor(", "\n\treturn   ParallelFor (")
    )
    assert fingerprint.family_fingerprint({"a.cc": CODE}) == fingerprint.family_fingerprint({"a.cc": reformatted})


def test_code_and_literal_changes_do_change_the_fingerprint():
    base = fingerprint.family_fingerprint({"a.cc": CODE})
    assert fingerprint.family_fingerprint({"a.cc": CODE.replace("64}", "65}")}) != base
    # Text that looks like a comment inside a string literal is code.
    assert fingerprint.family_fingerprint({"a.cc": CODE.replace("// not a comment", "// changed")}) != base
    assert fingerprint.family_fingerprint({"a.cc": CODE.replace("x // not", "x  // not")}) != base


def test_fingerprint_is_independent_of_file_order_but_not_of_file_names():
    first = fingerprint.family_fingerprint({"a.cc": "int a;", "b.h": "int b;"})
    assert first == fingerprint.family_fingerprint({"b.h": "int b;", "a.cc": "int a;"})
    assert first != fingerprint.family_fingerprint({"a.cc": "int b;", "b.h": "int a;"})
    assert fingerprint.FINGERPRINT_PATTERN.match(first)


def test_normalize_keeps_raw_strings_and_char_literals():
    text = "auto r = R\"d(a // b\n  c)d\";  // gone\nchar q = '\"'; int n = 1'000;  /* gone */"
    assert fingerprint.normalize_source(text) == "auto r=R\"d(a // b\n  c)d\";char q='\"';int n=1'000;"


def test_normalize_keeps_the_spaces_that_separate_tokens():
    assert fingerprint.normalize_source("return  x - -y ;\n unsigned   int z") == "return x- -y;unsigned int z"
    assert fingerprint.normalize_source("f (a,\n    b)") == fingerprint.normalize_source("f(a, b)") == "f(a,b)"


def test_call_sites_skip_comments_and_literals_and_give_lines():
    text = (
        "// ParallelFor(ctx, ...) in a comment\n"
        'const char* s = "ParallelFor(";\n'
        "x = ParallelForWithParticipant (ctx, n, plan, fn);\n"
        "/* ParallelFor(\n */ y = ParallelFor(ctx, n, plan, fn);\n"
        "MyParallelFor(ctx);\n"
    )
    assert fingerprint.parallel_for_call_sites("k.cc", text) == [
        "k.cc:3 ParallelForWithParticipant",
        "k.cc:5 ParallelFor",
    ]
