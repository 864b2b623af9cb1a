#!/usr/bin/env python3
"""The wings' layering, checked over the include graph.

plugin/CMakeLists.txt declares the wings bottom to top, one line each:
    skald_wing(<wing> <wings it may include>...)
This check fails when
  - a wing names a wing not declared before it (a cycle, or a wing above it);
  - a folder under plugin/ holds sources but is not a declared wing;
  - a source of plugin/<wing>/ includes "plugin/<other>/..." where <other> is neither the
    wing itself nor one it may include (directly or through the wings it names);
  - a source of pipeline_stages/ includes anything of plugin/ (the stage library knows
    nothing of Docker or HTTP) or cpp-httplib.
plugin/main.cc, the program, sits on top and may include every wing.

Usage: check-wings.py [SOURCE_DIR]       (default: this checkout)
       check-wings.py --self-test        (the check must fail on a tree with a back edge)
Prints the wing graph and, on failure, each forbidden include with its file and line.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

WING_RE = re.compile(r'^\s*skald_wing\(\s*(\w+)((?:\s+\w+)*)\s*\)', re.M)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def declared_wings(source_dir):
    """[(wing, [deps])] in the order plugin/CMakeLists.txt declares them."""
    with open(os.path.join(source_dir, 'plugin', 'CMakeLists.txt')) as f:
        text = f.read()
    # Only the calls, not the comment that shows the form.
    text = '\n'.join(line for line in text.splitlines() if not line.lstrip().startswith('#'))
    return [(m.group(1), m.group(2).split()) for m in WING_RE.finditer(text)]


def sources(folder):
    for name in sorted(os.listdir(folder)):
        if name.endswith(('.cc', '.h')):
            yield os.path.join(folder, name)


def includes(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for m in INCLUDE_RE.finditer(text):
        yield text.count('\n', 0, m.start()) + 1, m.group(1)


def check(source_dir):
    problems = []
    wings = declared_wings(source_dir)
    if not wings:
        return ['plugin/CMakeLists.txt declares no skald_wing(...)']
    allowed = {}  # wing -> the wings it may include (transitively), itself included
    for wing, deps in wings:
        if wing in allowed:
            problems.append(f'plugin/CMakeLists.txt: wing {wing} declared twice')
        reach = {wing}
        for dep in deps:
            if dep not in allowed:
                problems.append(f'plugin/CMakeLists.txt: wing {wing} names {dep}, which is not a '
                                f'wing declared before it (a cycle, or a wing above it)')
                continue
            reach |= allowed[dep]
        allowed[wing] = reach
    plugin_dir = os.path.join(source_dir, 'plugin')
    for entry in sorted(os.listdir(plugin_dir)):
        folder = os.path.join(plugin_dir, entry)
        if os.path.isdir(folder) and any(sources(folder)) and entry not in allowed:
            problems.append(f'plugin/{entry}/ holds sources but is not a wing in '
                            f'plugin/CMakeLists.txt')
    edges = 0
    for wing in allowed:
        folder = os.path.join(plugin_dir, wing)
        if not os.path.isdir(folder):
            problems.append(f'wing {wing}: no folder plugin/{wing}/')
            continue
        for path in sources(folder):
            for line, target in includes(path):
                m = re.match(r'plugin/(\w+)/', target)
                if not m:
                    continue
                edges += 1
                if m.group(1) not in allowed[wing]:
                    rel = os.path.relpath(path, source_dir)
                    problems.append(f'{rel}:{line}: includes {target}: wing {wing} may include '
                                    f'only {", ".join(sorted(allowed[wing]))}')
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
    print(f'wings, bottom to top ({edges} includes across folders checked):')
    for wing, deps in wings:
        print(f'  {wing:8} -> {" ".join(deps) if deps else "(nothing)"}')
    return problems


def self_test(source_dir):
    """Copies of the tree with one forbidden include each must fail, naming the include."""
    cases = [
        ('plugin/journal/back_edge.cc', '#include "plugin/config/log_options.h"\n',
         'a tree whose journal wing includes the config wing'),
        ('pipeline_stages/knows_docker.h', '#include "plugin/config/container_info.h"\n',
         'a stage library that includes the plugin'),
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
    print('ok: the check fails on a back edge and on a stage that includes the plugin')
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
        print('ok: no include crosses a wing edge not declared in plugin/CMakeLists.txt')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
