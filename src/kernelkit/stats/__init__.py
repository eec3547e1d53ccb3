"""Kernel mean embeddings, maximum mean discrepancy estimators and two-sample tests."""
