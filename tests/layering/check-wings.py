#!/usr/bin/env python3
"""The wings' layering, checked over the include graph.

plugin/CMakeLists.txt declares the plugin's wings bottom to top, one line each:
    skald_wing(<wing> <wings it may include>...)
and pipeline_stages/CMakeLists.txt the stage library's:
    skald_stage_wing(<wing> <wings it may include>...)
This check fails when, in either tree,
  - a wing names a wing not declared before it (a cycle, or a wing above it);
  - a folder holds sources but is not a declared wing;
  - a source of <tree>/<wing>/ includes "<tree>/<other>/..." where <other> is neither the wing
    itself nor one it may include (directly or through the wings it names), or includes a file
    of the tree's top (its own folder: plugin/main.cc, the stages themselves);
  - a source of pipeline_stages/ includes anything of plugin/ (the stage library knows
    nothing of Docker or HTTP) or cpp-httplib.
The plugin's wings may include the whole stage library, which sits below them.

Usage: check-wings.py [SOURCE_DIR]       (default: this checkout)
       check-wings.py --self-test        (the check must fail on a tree with a back edge)
Prints the wing graphs and, on failure, each forbidden include with its file and line.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TREES = [('plugin', 'skald_wing'), ('pipeline_stages', 'skald_stage_wing')]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def declared_wings(source_dir, tree, function):
    """[(wing, [deps])] in the order <tree>/CMakeLists.txt declares them."""
    with open(os.path.join(source_dir, tree, 'CMakeLists.txt')) as f:
        text = f.read()
    # Only the calls, not the comment that shows the form.
    text = '\n'.join(line for line in text.splitlines() if not line.lstrip().startswith('#'))
    call = re.compile(r'^\s*' + function + r'\(\s*(\w+)((?:\s+\w+)*)\s*\)', re.M)
    return [(m.group(1), m.group(2).split()) for m in call.finditer(text)]


def sources(folder):
    for name in sorted(os.listdir(folder)):
        if name.endswith(('.cc', '.h')):
            yield os.path.join(folder, name)


def includes(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for m in INCLUDE_RE.finditer(text):
        yield text.count('\n', 0, m.start()) + 1, m.group(1)


def check_tree(source_dir, tree, function, problems):
    """Checks one tree's wings; returns its wings and the count of includes checked."""
    wings = declared_wings(source_dir, tree, function)
    if not wings:
        problems.append(f'{tree}/CMakeLists.txt declares no {function}(...)')
        return wings, 0
    allowed = {}  # wing -> the wings it may include (transitively), itself included
    for wing, deps in wings:
        if wing in allowed:
            problems.append(f'{tree}/CMakeLists.txt: wing {wing} declared twice')
        reach = {wing}
        for dep in deps:
            if dep not in allowed:
                problems.append(f'{tree}/CMakeLists.txt: wing {wing} names {dep}, which is not a '
                                f'wing declared before it (a cycle, or a wing above it)')
                continue
            reach |= allowed[dep]
        allowed[wing] = reach
    tree_dir = os.path.join(source_dir, tree)
    for entry in sorted(os.listdir(tree_dir)):
        folder = os.path.join(tree_dir, entry)
        if os.path.isdir(folder) and any(sources(folder)) and entry not in allowed:
            problems.append(f'{tree}/{entry}/ holds sources but is not a wing in '
                            f'{tree}/CMakeLists.txt')
    edges = 0
    for wing in allowed:
        folder = os.path.join(tree_dir, wing)
        if not os.path.isdir(folder):
            problems.append(f'wing {wing}: no folder {tree}/{wing}/')
            continue
        for path in sources(folder):
            for line, target in includes(path):
                if not target.startswith(tree + '/'):
                    continue
                edges += 1
                m = re.match(re.escape(tree) + r'/(\w+)/', target)
                rel = os.path.relpath(path, source_dir)
                if not m:
                    problems.append(f'{rel}:{line}: includes {target}: the top of {tree}/ may '
                                    f'not be included by its wing {wing}')
                elif m.group(1) not in allowed[wing]:
                    problems.append(f'{rel}:{line}: includes {target}: wing {wing} may include '
                                    f'only {", ".join(sorted(allowed[wing]))}')
    return wings, edges


def check(source_dir):
    problems = []
    for tree, function in TREES:
        wings, edges = check_tree(source_dir, tree, function, problems)
        print(f'{tree}: wings, bottom to top ({edges} includes across folders checked):')
        for wing, deps in wings:
            print(f'  {wing:12} -> {" ".join(deps) if deps else "(nothing)"}')
    stages = os.path.join(source_dir, 'pipeline_stages')
    for root, _, files in os.walk(stages):
        for name in sorted(files):
            if not name.endswith(('.cc', '.h')):
                continue
            path = os.path.join(root, name)
            for line, target in includes(path):
                if target.startswith('plugin/') or target.startswith('httplib'):
                    rel = os.path.relpath(path, source_dir)
                    problems.append(f'{rel}:{line}: includes {target}: pipeline_stages/ knows '
                                    f'nothing of the plugin, Docker or HTTP')
    return problems


def self_test(source_dir):
    """Copies of the tree with one forbidden include each must fail, naming the include."""
    cases = [
        ('plugin/journal/back_edge.cc', '#include "plugin/config/log_options.h"\n',
         'a tree whose journal wing includes the config wing'),
        ('pipeline_stages/knows_docker.h', '#include "plugin/config/container_info.h"\n',
         'a stage library that includes the plugin'),
        ('pipeline_stages/go/back_edge.cc', '#include "pipeline_stages/go_template/go_template.h"\n',
         'a tree whose go wing includes the template engine'),
    ]
    for path, text, what in cases:
        with tempfile.TemporaryDirectory(prefix='check-wings-') as tmp:
            copy = os.path.join(tmp, 'src')
            for folder in ('plugin', 'pipeline_stages'):
                shutil.copytree(os.path.join(source_dir, folder), os.path.join(copy, folder))
            with open(os.path.join(copy, path), 'w') as f:
                f.write(text)
            run = subprocess.run([sys.executable, __file__, copy], capture_output=True, text=True)
            if run.returncode == 0 or f'{path}:1' not in run.stdout:
                print(f'FAIL: the check passed {what}')
                print(run.stdout)
                return 1
    print('ok: the check fails on a back edge in either tree and on a stage that includes the plugin')
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_dir = os.path.normpath(os.path.join(here, '..', '..'))
    if len(sys.argv) > 1 and sys.argv[1] == '--self-test':
        return self_test(sys.argv[2] if len(sys.argv) > 2 else default_dir)
    problems = check(sys.argv[1] if len(sys.argv) > 1 else default_dir)
    for p in problems:
        print('FAIL: ' + p)
    if not problems:
        print('ok: no include crosses a wing edge not declared in plugin/ or pipeline_stages/'
              'CMakeLists.txt')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
