#pragma once
/// @file
/// Everything in kacc: storage formats, accessor views, and the kernels built on them.

#include <kacc/core.hpp>
