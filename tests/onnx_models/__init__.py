"""ONNX model builders for tests/test_onnx_models.py (onnx.helper graphs with deterministic weights)."""
