# Compiles the ```hlsl block of docs/gpu.md (+ shaders/hlsl_entry.hlsl) with
# glslangValidator's HLSL front end, so the documented snippet cannot rot.
#   cmake -DDOC=docs/gpu.md -DENTRY=... -DOUT=dir -DGLSLANG=glslangValidator -P doc_snippet.cmake
file(READ ${DOC} text)
string(FIND "${text}" "```hlsl\n" begin)
if(begin EQUAL -1)
  message(FATAL_ERROR "${DOC}: no ```hlsl block")
endif()
math(EXPR begin "${begin} + 8")
string(SUBSTRING "${text}" ${begin} -1 rest)
string(FIND "${rest}" "```" end)
string(SUBSTRING "${rest}" 0 ${end} snippet)
file(READ ${ENTRY} entry)
file(WRITE ${OUT}/doc_snippet.hlsl "${snippet}\n${entry}")
execute_process(COMMAND ${GLSLANG} -D -V -S vert -e main -o ${OUT}/doc_snippet.spv ${OUT}/doc_snippet.hlsl
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the HLSL snippet of ${DOC} does not compile")
endif()
