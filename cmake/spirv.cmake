# untold_spirv_header(<target> SHADER_DIR <dir> SHADERS <shader>...): compiles
# each GLSL shader <dir>/<shader> with glslangValidator (Debian's
# glslang-tools) into a C header <name>_<stage>.h holding
# `const uint32_t <name>_<stage>[]`, in <target>'s binary directory, which
# joins its include path. Shaders may #include untold_decode.glsl
# (include/untold/shaders) and the .glsl files of <dir>. Used by the GPU
# render tests (tests/gpu) and `untold render` (tools/render).
find_program(UNTOLD_GLSLANG_VALIDATOR glslangValidator)
set(UNTOLD_GPU_DECODE_DIR ${CMAKE_CURRENT_LIST_DIR}/../include/untold/shaders)

function(untold_spirv_header target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SHADER_DIR" "SHADERS")
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_spirv)
  file(GLOB includes ${arg_SHADER_DIR}/*.glsl)
  set(headers)
  foreach(shader IN LISTS arg_SHADERS)
    string(REPLACE "." "_" symbol ${shader})
    set(header ${out_dir}/${symbol}.h)
    add_custom_command(
      OUTPUT ${header}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND ${UNTOLD_GLSLANG_VALIDATOR} -V -I${UNTOLD_GPU_DECODE_DIR} --vn ${symbol} -o ${header}
              ${arg_SHADER_DIR}/${shader}
      DEPENDS ${arg_SHADER_DIR}/${shader} ${includes} ${UNTOLD_GPU_DECODE_DIR}/untold_decode.glsl
      COMMENT "glslangValidator ${shader}"
      VERBATIM)
    list(APPEND headers ${header})
  endforeach()
  target_sources(${target} PRIVATE ${headers})
  target_include_directories(${target} PRIVATE ${out_dir})
endfunction()
