"""Code generation: device memory images (`memimage`, shared by both accelerators), the HLS C++
Vitis project (`hls`, rendered from `templates/hls/`) and its g++ C simulation (`hls_csim`)."""
