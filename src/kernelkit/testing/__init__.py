"""kernelkit.testing."""
