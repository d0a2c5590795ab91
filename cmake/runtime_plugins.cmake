# The C++ runtime plugins of the model_file kind (docs/runtimes.md):
# librpxprof-opencv.so (OpenCV 4.6's DNN module) and librpxprof-torch.so
# (libtorch), MODULE libraries beside librpxprof-http.so. Each is built only
# when a C++ compiler and its runtime's development files are found (as the
# examples are: Debian's libopencv-dnn-dev, libtorch-dev), and skipped with one
# line otherwise. They link no rpxprof code (src/runtimes/cxx/plugin_common.hpp):
# the C sanitizer flags never reach them, so the ASan+UBSan build of rpxprof
# links and loads them unchanged.
option(RPX_RUNTIME_PLUGINS "Build the OpenCV and libtorch runtime plugins when their packages are found" ON)
if(NOT RPX_RUNTIME_PLUGINS)
  message(STATUS "rpxprof: the OpenCV and libtorch runtime plugins are off (RPX_RUNTIME_PLUGINS=OFF)")
  return()
endif()
include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
  message(STATUS "rpxprof: no C++ compiler: the OpenCV and libtorch runtime plugins are not built")
  return()
endif()
enable_language(CXX)

# rpx_runtime_plugin(NAME SOURCES...): librpxprof-NAME.so with the project's
# C++ warnings (-Werror with RPX_WERROR), hidden symbols but its two exports.
function(rpx_runtime_plugin name)
  add_library(rpxprof-${name} MODULE ${ARGN} ${CMAKE_SOURCE_DIR}/src/runtimes/cxx/plugin_common.cpp)
  target_include_directories(rpxprof-${name} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(rpxprof-${name} PRIVATE PkgConfig::JANSSON PkgConfig::NETTLE ${CMAKE_DL_LIBS})
  target_compile_options(rpxprof-${name} PRIVATE -Wall -Wextra -Wshadow -Wformat=2 -Wundef
                         -Wno-missing-field-initializers $<$<BOOL:${RPX_WERROR}>:-Werror>)
  target_link_options(rpxprof-${name} PRIVATE "LINKER:--no-undefined")
  set_target_properties(rpxprof-${name} PROPERTIES PREFIX "lib" CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  install(TARGETS rpxprof-${name} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/rpxprof)
endfunction()

# OpenCV: Debian's libopencv-dnn-dev has no CMake package (that comes with libopencv-dev)
find_package(OpenCV QUIET COMPONENTS core dnn)
if(NOT OpenCV_FOUND)
  find_path(RPX_RT_OPENCV_INCLUDE opencv2/dnn.hpp PATH_SUFFIXES opencv4)
  find_library(RPX_RT_OPENCV_CORE opencv_core)
  find_library(RPX_RT_OPENCV_DNN opencv_dnn)
  if(RPX_RT_OPENCV_INCLUDE AND RPX_RT_OPENCV_CORE AND RPX_RT_OPENCV_DNN)
    set(OpenCV_FOUND TRUE)
    set(OpenCV_INCLUDE_DIRS ${RPX_RT_OPENCV_INCLUDE})
    set(OpenCV_LIBS ${RPX_RT_OPENCV_DNN} ${RPX_RT_OPENCV_CORE})
  endif()
endif()
if(OpenCV_FOUND)
  rpx_runtime_plugin(opencv src/runtimes/opencv/opencv_plugin.cpp
                     src/runtimes/opencv/opencv_layers.cpp src/runtimes/opencv/onnx_graph.cpp)
  target_include_directories(rpxprof-opencv SYSTEM PRIVATE ${OpenCV_INCLUDE_DIRS})
  target_link_libraries(rpxprof-opencv PRIVATE ${OpenCV_LIBS})
else()
  message(STATUS "rpxprof: librpxprof-opencv.so not built: no OpenCV dnn module "
                 "(Debian: libopencv-dnn-dev; ./scripts/setup.sh --with-examples)")
endif()

find_package(Torch QUIET)
if(Torch_FOUND)
  rpx_runtime_plugin(torch src/runtimes/torch/torch_plugin.cpp src/runtimes/torch/torch_layers.cpp)
  target_include_directories(rpxprof-torch SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS})
  target_link_libraries(rpxprof-torch PRIVATE ${TORCH_LIBRARIES})
else()
  message(STATUS "rpxprof: librpxprof-torch.so not built: no libtorch "
                 "(Debian: libtorch-dev; ./scripts/setup.sh --with-examples)")
endif()
