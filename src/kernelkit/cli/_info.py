"""``kernelkit info``: versions, threads, BLAS and devices."""

from __future__ import annotations

import importlib.metadata
import os
import platform


def collect_info() -> dict[str, str]:
    """Versions of kernelkit and its dependencies, thread counts, BLAS and devices."""
    import numpy
    import scipy
    import sklearn
    import torch

    from kernelkit import __version__

    info = {
        "kernelkit": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "cpu cores": str(os.cpu_count()),
        "torch threads": str(torch.get_num_threads()),
        "device": (
            f"cuda ({torch.cuda.device_count()}): {torch.cuda.get_device_name(0)}"
            if torch.cuda.is_available()
            else "cpu (no CUDA device)"
        ),
    }
    try:
        from threadpoolctl import threadpool_info

        blas = [
            f"{p['internal_api']} {p['version']} ({p['num_threads']} threads)"
            for p in threadpool_info()
            if p.get("user_api") == "blas"
        ]
        info["BLAS"] = "; ".join(blas) or "unknown"
    except ImportError:
        info["BLAS"] = "unknown (threadpoolctl not installed)"
    for extra in ("rdkit", "networkx", "matplotlib", "safetensors"):
        try:
            info[extra] = importlib.metadata.version(extra)
        except importlib.metadata.PackageNotFoundError:
            info[extra] = "not installed"
    return info
