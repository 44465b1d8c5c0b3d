#!/usr/bin/env python3
"""scripts/ptx-same.py [--ns NAME]... REV OLD_GLOB NEW_GLOB - whether the
CUDA files OLD_GLOB of commit REV and NEW_GLOB of this checkout compile to
the same kernels, one for one: PTX equal after the names a file gives to
its anonymous namespace (and each named namespace NAME that took the
place of one), branch labels, line information and linkage are set
aside.

Why.  A change that only moves device code between files (a split for a
faster build, a shared header) leaves every kernel's code as it was, and
this proves it here, where there is no GPU: ptxas turns equal PTX into
equal machine code, so the timings and outputs of those kernels cannot
have changed.  Host code (which kernel a call launches, with what grid)
is not compared: read its diff.  Nor is this a test of a change to what a
kernel does; that is `make test-gpu` on the device.

The compile command is the one the Makefile uses for
collect/baselines/problems/*.cu (make -n V=1), with -ptx for one virtual
architecture in place of the object's -gencode pair.  Each file's kernels
are keyed by their mangled names with the namespace prefixes above
removed; the two sides must have the same keys, with equal bodies.
Exit 0 when they do, 1 when not (the first differences are printed), 2 on
bad usage or a failed compile.
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

# Anonymous namespaces are named after the file (and a hash).
ANON = r'\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}'
LABEL = re.compile(r'\$L__BB\d+_')
START = re.compile(r'\n(?=(?:\.visible |\.weak )?\.(?:entry|func) )')
NAME = re.compile(r'(?:\.visible |\.weak )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([^\s(]+)')


def prefix_pattern(names):
    """The namespace prefixes to remove from mangled names: any anonymous
    one, and the named ones NAMES (length-prefixed, as mangled)."""
    alts = [ANON] + ['%d%s' % (len(n), re.escape(n)) for n in names]
    return re.compile(r'(_Z+N)(?:%s)' % '|'.join(alts))


def normalise(text, prefix):
    text = text.replace('.visible .entry', '.entry').replace('.visible .func', '.func')
    return LABEL.sub('$L__BB_', prefix.sub(r'\1', text))


def kernels(ptx_path, prefix):
    """{normalised name: normalised body} of every function in the file."""
    text = open(ptx_path).read()
    out = {}
    for part in START.split(text)[1:]:
        m = NAME.match(part)
        if not m:
            continue
        end = part.find('\n}\n')
        body = part[:end + 2] if end >= 0 else part
        body = '\n'.join(l for l in body.split('\n') if not l.strip().startswith(('.loc', '.file')))
        out[normalise(m.group(1), prefix)] = normalise(body, prefix)
    return out


def ptx_command(root):
    """The Makefile's nvcc command for a problems/*.cu object, as a list
    with the source and output left out, made to write PTX."""
    probe = 'build/obj/collect/baselines/problems/chain.cu.o'
    deps = os.environ.get('DEPS_ROOT', os.path.join(root, '.deps/root'))
    r = subprocess.run(['make', '-s', '-n', '-B', 'V=1', 'DEPS_ROOT=' + deps, probe], cwd=root,
                       capture_output=True, text=True)
    line = next((l for l in r.stdout.splitlines() if 'nvcc' in l and ' -c ' in l), None)
    if line is None:
        sys.exit('ptx-same: make -n names no nvcc command for %s in %s' % (probe, root))
    words = shlex.split(line)
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w in ('-c', '-o', '-gencode', '-MF', '-MT'):
            i += 2
            continue
        if w in ('-MMD', '-MP'):
            i += 1
            continue
        out.append(w)
        i += 1
    return out + ['-arch=compute_90', '-ptx']


def compile_all(root, files, tmp, tag, prefix):
    cmd = ptx_command(root)
    procs, outs = [], []
    for f in files:
        dst = os.path.join(tmp, '%s-%s.ptx' % (tag, f.replace('/', '_')))
        procs.append((f, subprocess.Popen(cmd + [f, '-o', dst], cwd=root, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True)))
        outs.append(dst)
    for f, p in procs:
        _, err = p.communicate()
        if p.returncode:
            sys.exit('ptx-same: %s (%s) does not compile:\n%s' % (f, tag, err[-2000:]))
    merged = {}
    for dst in outs:
        for k, v in kernels(dst, prefix).items():
            if k in merged and merged[k] != v:
                sys.exit('ptx-same: %s is compiled twice, differently (%s)' % (k, tag))
            merged[k] = v
    return merged


def main(argv):
    args, names = argv[1:], []
    if args and args[0] in ('-h', '--help'):
        print(__doc__.strip())
        return 0
    while len(args) >= 2 and args[0] == '--ns':
        names.append(args[1])
        args = args[2:]
    if len(args) != 3:
        print('usage: scripts/ptx-same.py [--ns NAME]... REV OLD_GLOB NEW_GLOB', file=sys.stderr)
        return 2
    rev, old_glob, new_glob = args
    prefix = prefix_pattern(names)
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
    with tempfile.TemporaryDirectory(prefix='kbv-ptx-') as tmp:
        old_root = os.path.join(tmp, 'old')
        os.mkdir(old_root)
        arch = subprocess.run('git archive %s | tar -C %s -xf -' % (shlex.quote(rev), shlex.quote(old_root)),
                              shell=True, cwd=here)
        if arch.returncode:
            return 2
        old_files = sorted(os.path.relpath(p, old_root) for p in glob.glob(os.path.join(old_root, old_glob)))
        new_files = sorted(os.path.relpath(p, here) for p in glob.glob(os.path.join(here, new_glob)))
        if not old_files or not new_files:
            print('ptx-same: a glob names no file (%d old, %d new)' % (len(old_files), len(new_files)),
                  file=sys.stderr)
            return 2
        os.environ.setdefault('DEPS_ROOT', os.path.join(here, '.deps/root'))
        old = compile_all(old_root, old_files, tmp, 'old', prefix)
        new = compile_all(here, new_files, tmp, 'new', prefix)
    only_old, only_new = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    differ = sorted(k for k in old if k in new and old[k] != new[k])
    print('ptx-same: %d functions at %s (%s), %d here (%s); %d only there, %d only here, %d differ'
          % (len(old), rev, ' '.join(old_files), len(new), ' '.join(new_files), len(only_old), len(only_new),
             len(differ)))
    for k in (only_old + only_new + differ)[:10]:
        print('  ' + k)
    return 0 if not (only_old or only_new or differ) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
