# Stand-ins for the Vivado commands fanns's generated Tcl scripts use (IP packaging, package_xo).
#
# Each stand-in checks its arguments as far as the script's correctness depends on them (the
# number of operands, that an object it is given exists, that a file it is told to read exists),
# records the call and returns a handle the script passes on, so a script runs to its end exactly
# as its control flow goes in Vivado. `standin::json` returns every recorded call as JSON;
# tests/tcl/run_tcl.py turns that into the design the script built and the tests compare it with
# ports.json and regmap.json. A command without a stand-in stops the script ("invalid command
# name"), so a script cannot use a Vivado command the tests do not know.

namespace eval ipx {}
namespace eval standin {
  variable calls {}
  variable objects [dict create]
  variable core ""
}

proc standin::record {cmd args} {
  variable calls
  lappend calls [list $cmd $args]
}

proc standin::need {cmd count args} {
  if {[llength $args] != $count} {
    error "$cmd: expected $count operand(s), got [llength $args]: $args"
  }
}

proc standin::exists {cmd handle} {
  variable objects
  if {![dict exists $objects $handle]} {
    error "$cmd: no object $handle"
  }
}

proc standin::new {cmd handle} {
  variable objects
  if {[dict exists $objects $handle]} {
    error "$cmd: $handle exists already"
  }
  dict set objects $handle {}
  return $handle
}

proc standin::option {args name} {
  set i [lsearch -exact $args $name]
  if {$i < 0 || $i + 1 >= [llength $args]} {
    return ""
  }
  return [lindex $args [expr {$i + 1}]]
}

proc standin::quote {text} {
  set map [list \\ \\\\ \" \\\" \n \\n \r \\r \t \\t]
  return "\"[string map $map $text]\""
}

proc standin::json {} {
  variable calls
  set items {}
  foreach call $calls {
    set cmd [lindex $call 0]
    set operands {}
    foreach a [lindex $call 1] {
      lappend operands [standin::quote $a]
    }
    lappend items "\{\"cmd\": [standin::quote $cmd], \"args\": \[[join $operands {, }]\]\}"
  }
  return "\[[join $items ",\n"]\]"
}

# -- projects and files ------------------------------------------------------------------------
proc create_project {args} {
  if {[standin::option $args -part] eq ""} {
    error "create_project: no -part"
  }
  standin::record create_project {*}$args
  return [standin::new create_project project:[lindex [lsearch -all -inline -not -glob $args -*] 0]]
}

proc add_files {args} {
  foreach f [lsearch -all -inline -not -glob $args -*] {
    if {![file exists $f]} {
      error "add_files: $f does not exist"
    }
  }
  standin::record add_files {*}$args
}

proc current_fileset {args} {
  return fileset:sources_1
}

proc update_compile_order {args} {
  standin::record update_compile_order {*}$args
}

proc close_project {args} {
  standin::record close_project {*}$args
}

proc set_property {args} {
  standin::need set_property 3 {*}$args
  lassign $args name value object
  if {$object ne "fileset:sources_1"} {
    standin::exists set_property $object
  }
  standin::record set_property $name $value $object
}

proc get_property {args} {
  standin::need get_property 2 {*}$args
  lassign $args name object
  standin::exists get_property $object
  if {[string toupper $name] ne "NAME"} {
    error "get_property: the stand-in knows only NAME, not $name"
  }
  return [lindex [split $object :] end]
}

# -- IP packaging ------------------------------------------------------------------------------
proc ipx::package_project {args} {
  foreach opt {-root_dir -vendor -library -taxonomy} {
    if {[standin::option $args $opt] eq ""} {
      error "ipx::package_project: no $opt"
    }
  }
  standin::record ipx::package_project {*}$args
  set standin::core [standin::new ipx::package_project core]
}

proc ipx::current_core {args} {
  if {$standin::core eq ""} {
    error "ipx::current_core: no IP is being packaged"
  }
  return $standin::core
}

proc standin::children {kind core} {
  standin::exists $kind $core
  return [lsearch -all -inline -glob [dict keys $standin::objects] $kind:*]
}

proc ipx::get_bus_interfaces {args} {
  return [standin::children busif [standin::option $args -of_objects]]
}

proc ipx::get_user_parameters {args} {
  return [standin::children userparam [standin::option $args -of_objects]]
}

proc ipx::remove_bus_interface {args} {
  standin::need ipx::remove_bus_interface 2 {*}$args
  standin::exists ipx::remove_bus_interface busif:[lindex $args 0]
  dict unset standin::objects busif:[lindex $args 0]
  standin::record ipx::remove_bus_interface {*}$args
}

proc ipx::remove_user_parameter {args} {
  standin::need ipx::remove_user_parameter 2 {*}$args
  dict unset standin::objects userparam:[lindex $args 0]
  standin::record ipx::remove_user_parameter {*}$args
}

proc ipx::add_bus_interface {args} {
  standin::need ipx::add_bus_interface 2 {*}$args
  lassign $args name core
  standin::exists ipx::add_bus_interface $core
  standin::record ipx::add_bus_interface $name
  return [standin::new ipx::add_bus_interface busif:$name]
}

proc ipx::add_port_map {args} {
  standin::need ipx::add_port_map 2 {*}$args
  lassign $args logical busif
  standin::exists ipx::add_port_map $busif
  standin::record ipx::add_port_map $logical $busif
  return [standin::new ipx::add_port_map portmap:[lindex [split $busif :] 1]:$logical]
}

proc ipx::add_bus_parameter {args} {
  standin::need ipx::add_bus_parameter 2 {*}$args
  lassign $args name busif
  standin::exists ipx::add_bus_parameter $busif
  standin::record ipx::add_bus_parameter $name $busif
  return [standin::new ipx::add_bus_parameter busparam:[lindex [split $busif :] 1]:$name]
}

proc ipx::add_memory_map {args} {
  standin::need ipx::add_memory_map 2 {*}$args
  standin::exists ipx::add_memory_map [lindex $args 1]
  standin::record ipx::add_memory_map [lindex $args 0]
  return [standin::new ipx::add_memory_map memmap:[lindex $args 0]]
}

proc ipx::add_address_block {args} {
  standin::need ipx::add_address_block 2 {*}$args
  lassign $args name mmap
  standin::exists ipx::add_address_block $mmap
  standin::record ipx::add_address_block $name $mmap
  return [standin::new ipx::add_address_block block:[lindex [split $mmap :] 1]:$name]
}

proc ipx::add_address_space {args} {
  standin::need ipx::add_address_space 2 {*}$args
  standin::exists ipx::add_address_space [lindex $args 1]
  standin::record ipx::add_address_space [lindex $args 0]
  return [standin::new ipx::add_address_space addrspace:[lindex $args 0]]
}

proc ipx::associate_bus_interfaces {args} {
  set busif [standin::option $args -busif]
  set clock [standin::option $args -clock]
  standin::exists ipx::associate_bus_interfaces busif:$busif
  standin::exists ipx::associate_bus_interfaces busif:$clock
  standin::record ipx::associate_bus_interfaces $busif $clock
}

foreach standin_cmd {create_xgui_files update_source_project_archive update_checksums check_integrity save_core} {
  proc ipx::$standin_cmd {args} [format {
    standin::exists ipx::%1$s [lindex $args end]
    standin::record ipx::%1$s {*}$args
  } $standin_cmd]
}

# -- Vitis kernel packaging --------------------------------------------------------------------
proc package_xo {args} {
  foreach opt {-xo_path -kernel_name -ip_directory} {
    if {[standin::option $args $opt] eq ""} {
      error "package_xo: no $opt"
    }
  }
  set xml [standin::option $args -kernel_xml]
  if {$xml ne "" && ![file exists $xml]} {
    error "package_xo: kernel XML $xml does not exist"
  }
  standin::record package_xo {*}$args
}
