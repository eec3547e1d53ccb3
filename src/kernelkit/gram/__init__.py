"""kernelkit.gram."""
