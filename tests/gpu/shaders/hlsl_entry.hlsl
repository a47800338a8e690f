// Appended to the HLSL snippet of docs/gpu.md by tests/gpu/doc_snippet.cmake:
// a vertex shader using every function with the Direct3D input types of the
// table (PBR normal as R32_UINT -> uint, GpuVertex normal R16G16_SNORM ->
// float2, tangent R16G16_SINT -> int2).
float4 main(uint normal : NORMAL, float2 oct_normal : TEXCOORD0, int2 oct_tangent : TANGENT) : SV_Position {
  float4 n = untold_unpack_snorm10_10_10_2(normal);
  float4 t = untold_oct_decode_tangent(oct_tangent);
  return float4(n.xyz + untold_oct_decode(oct_normal) + t.xyz, untold_handedness(n.w) * t.w);
}
