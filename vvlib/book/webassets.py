"""The book's browser-side files, so that math and widgets render with no network.

Sphinx and myst-nb load MathJax, require.js and the Jupyter widget manager from CDNs by
default; offline, the math stays raw TeX and the widgets blank.  We fetch pinned releases
from the npm registry at build time (checked against the registry's published sha512),
keep only the files a page needs, and serve them from the book itself (_config.yml points
`mathjax_path` and `nb_ipywidgets_js` at them).  Nothing third-party is committed.

The files land in <root>/_book_assets/ (served as _static/), not in a `_static/` source
folder: Jupyter Book 1 would add every .js found there to every page.
"""

import base64
import hashlib
import io
import os
import tarfile
import urllib.request
from pathlib import Path

ASSETS = "_book_assets"
REGISTRY = "https://registry.npmjs.org"
# package: (version, sha512 integrity from the registry, {path in the tarball: path served})
PACKAGES = {
    "requirejs": ("2.3.8", "7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw==",
                  {"package/require.js": "require.js"}),
    "@jupyter-widgets/html-manager": (
        "1.0.15", "5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
        {"package/dist/embed-amd.js": "embed-amd.js"}),
    "mathjax": ("3.2.2", "Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
                # the combined TeX build, and what it loads on demand (fonts, menu, a11y, TeX extensions)
                {"package/es5/tex-mml-chtml.js": "mathjax/tex-mml-chtml.js",
                 "package/es5/output/chtml/fonts/woff-v2/": "mathjax/output/chtml/fonts/woff-v2/",
                 "package/es5/ui/": "mathjax/ui/", "package/es5/a11y/": "mathjax/a11y/",
                 "package/es5/input/tex/extensions/": "mathjax/input/tex/extensions/"}),
}
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "vvlib" / "npm"


def tarball(package: str) -> bytes:
    """The package's release tarball: from the cache, else from the registry; integrity checked."""
    version, integrity, _ = PACKAGES[package]
    name = package.split("/")[-1]
    cached = CACHE / f"{name}-{version}.tgz"
    data = cached.read_bytes() if cached.exists() else None
    if data is None:
        url = f"{REGISTRY}/{package}/-/{name}-{version}.tgz"
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                data = response.read()
        except OSError as exc:
            raise RuntimeError(f"could not download {url} ({exc}); the book needs it to render math and "
                               f"widgets offline. Put the file at {cached} to build without network.") from exc
    if base64.b64encode(hashlib.sha512(data).digest()).decode() != integrity:
        raise RuntimeError(f"{package}@{version}: the tarball does not match the registry's sha512; not using it")
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(data)
    return data


def install(root: Path) -> Path:
    """Extract the served files under root/_book_assets/ (skipped when already there)."""
    dest = Path(root) / ASSETS
    for package, (version, _, files) in PACKAGES.items():
        stamp = dest / f".{package.replace('/', '_')}-{version}"
        if stamp.exists():
            continue
        with tarfile.open(fileobj=io.BytesIO(tarball(package)), mode="r:gz") as archive:
            for member in archive.getmembers():
                for source, target in files.items():
                    if member.isfile() and (member.name == source or source.endswith("/") and member.name.startswith(source)):
                        out = dest / (target + member.name[len(source):] if source.endswith("/") else target)
                        out.parent.mkdir(parents=True, exist_ok=True)
                        out.write_bytes(archive.extractfile(member).read())
        stamp.touch()
    return dest
