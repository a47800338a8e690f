// untold_decode.glsl - shader-side decoding of the untold vertex layouts
// (docs/gpu.md; the fetch formats are in untold/gpu_formats.hpp).
//
// Include it (#extension GL_GOOGLE_include_directive, or paste it) after
// #version; it needs GLSL 1.30+ / ESSL 3.00+ (integer shifts) and compiles
// for Vulkan and OpenGL alike (tests/gpu compiles it with glslangValidator).
// Every function is total: any stored bit pattern decodes to something, and
// each one computes exactly the library's scalar decoder (untold/packing.hpp)
// up to float rounding in normalize().
#ifndef UNTOLD_DECODE_GLSL
#define UNTOLD_DECODE_GLSL

// PBR_STATIC_V1 tangent.w (fetched as snorm10-10-10-2) -> handedness +1 / -1:
// the 2-bit w is 0b01 (+1) or 0b11 (-1); any value < 0 means -1 (spec 4).
float untold_handedness(float w) {
  return w < 0.0 ? -1.0 : 1.0;
}

// The raw u32 of a 10:10:10:2 snorm field (the fetch on APIs without a
// signed 10:10:10:2 vertex format: Direct3D R32_UINT, WebGPU "uint32") ->
// what Vulkan's A2B10G10R10_SNORM_PACK32 would fetch: x, y, z = max(q / 511, -1),
// w = max(q2, -1) for the 2-bit w.
vec4 untold_unpack_snorm10_10_10_2(uint bits) {
  int x = int(bits << 22u) >> 22;
  int y = int(bits << 12u) >> 22;
  int z = int(bits << 2u) >> 22;
  int w = int(bits) >> 30;
  return max(vec4(float(x) / 511.0, float(y) / 511.0, float(z) / 511.0, float(w)), vec4(-1.0));
}

// GpuVertex normal: 2 x snorm16 octahedral (fetched as snorm16x2, i.e.
// max(q / 32767, -1)) -> unit vector. Unfolds the lower hemisphere.
vec3 untold_oct_decode(vec2 e) {
  vec3 v = vec3(e.x, e.y, 1.0 - abs(e.x) - abs(e.y));
  if (v.z < 0.0) {
    vec2 s = vec2(e.x >= 0.0 ? 1.0 : -1.0, e.y >= 0.0 ? 1.0 : -1.0);
    v.xy = (vec2(1.0) - abs(e.yx)) * s;
  }
  return normalize(v);
}

// GpuVertex tangent: 2 x sint16 octahedral fetched as integers (sint16x2),
// handedness in bit 0 of x -> (unit direction, +1 / -1). The direction is
// decoded from the stored code including bit 0, as the library does.
vec4 untold_oct_decode_tangent(ivec2 q) {
  vec2 e = max(vec2(q) / 32767.0, vec2(-1.0));
  float handedness = (q.x & 1) != 0 ? -1.0 : 1.0;
  return vec4(untold_oct_decode(e), handedness);
}

// PBR_QUANT_V1 position: unorm16x4 fetched (q / 65535) -> the mesh record's
// localBounds (a per-draw constant): mix(min, max, q.xyz), the library's
// dequantize_in_bounds (untold/vertex_quant.hpp) up to float rounding.
vec3 untold_quant_position(vec4 q, vec3 bounds_min, vec3 bounds_max) {
  return mix(bounds_min, bounds_max, q.xyz);
}

// PBR_QUANT_V1 tangent handedness, stored in the position's w: 65535 (1.0)
// -> +1, 0 -> -1. The direction is untold_oct_decode of the snorm8x2 fetch.
float untold_quant_handedness(vec4 q) {
  return q.w >= 0.5 ? 1.0 : -1.0;
}

#endif  // UNTOLD_DECODE_GLSL
