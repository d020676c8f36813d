#pragma once
/// @file
/// kacc core: storage formats, conversions, proxy references and accessor views.

#include <kacc/core/accumulator.hpp>
#include <kacc/core/config.hpp>
#include <kacc/core/double_double.hpp>
#include <kacc/core/exact.hpp>
#include <kacc/core/format_traits.hpp>
#include <kacc/core/mdspan_accessor.hpp>
#include <kacc/core/quad_double.hpp>
#include <kacc/core/reference.hpp>
#include <kacc/core/traits.hpp>
#include <kacc/core/view.hpp>
#include <kacc/core/view_algorithms.hpp>
