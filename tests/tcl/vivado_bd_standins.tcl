# Stand-ins for the Vivado commands a generated block-design script uses (no Vivado here).
#
# Each command checks its arguments the way the script relies on them (objects exist, pins exist
# on the cell they name, an interface is connected once) and records what the design would
# hold: cells and their CONFIG properties, interface connections, nets, address assignments,
# the runs and the copied outputs. `::sd::dump FILE` writes the record, one fact per line
# (fields separated by tabs), for tests/tcl_standins.py.
#
# The IPs the stand-ins know, and the pins each offers:
#  - zynq_ultra_ps_e / processing_system7: an AXI port or PL clock exists only once the CONFIG
#    property that enables it is 1 (as in the real IP), so a wrong property name shows up as a
#    missing pin;
#  - smartconnect: S00_AXI.. and M00_AXI.. per CONFIG.NUM_SI / NUM_MI, aclk, aresetn;
#  - proc_sys_reset: its clock and reset pins;
#  - the accelerator: what `update_ip_catalog` finds in the ip_repo_paths folders
#    (standin_ip.tcl, written by the vitis_hls stand-in's export_design from the kernel's
#    interface pragmas, or by the test for a packaged RTL core).

namespace eval ::sd {
  variable facts {}
  variable cells [dict create]
  variable props [dict create]
  variable catalog [dict create]
  variable repos {}
  variable connected [dict create]
  variable project ""
  variable project_dir ""
  variable design ""
  variable runs_dir ""
}

proc ::sd::fact {args} {
  variable facts
  lappend facts [join $args "\t"]
}

proc ::sd::fail {msg} {
  return -code error -level 2 "stand-in: $msg"
}

proc ::sd::register_ip {vlnv intf_pins pins} {
  variable catalog
  dict set catalog $vlnv [dict create intf $intf_pins pins $pins]
}

proc ::sd::option {argv name {default ""}} {
  set i [lsearch -exact $argv $name]
  if {$i < 0} { return $default }
  return [lindex $argv [expr {$i + 1}]]
}

proc ::sd::positional {argv {flags_with_value {}}} {
  set out {}
  for {set i 0} {$i < [llength $argv]} {incr i} {
    set a [lindex $argv $i]
    if {[string index $a 0] eq "-"} {
      if {$a in $flags_with_value} { incr i }
      continue
    }
    lappend out $a
  }
  return $out
}

proc ::sd::config {cell name {default 0}} {
  variable props
  if {[dict exists $props $cell CONFIG.$name]} { return [dict get $props $cell CONFIG.$name] }
  return $default
}

# The pins (kind intf or pin) a cell has now.
proc ::sd::pins_of {cell kind} {
  variable cells
  variable catalog
  set vlnv [dict get $cells $cell]
  set intf {}
  set pins {}
  switch -glob -- $vlnv {
    xilinx.com:ip:zynq_ultra_ps_e* {
      foreach {n gp} {0 2 1 3 2 4 3 5} {
        if {[config $cell PSU__USE__S_AXI_GP$gp]} { lappend intf S_AXI_HP${n}_FPD; lappend pins saxihp${n}_fpd_aclk }
      }
      foreach {n gp} {0 0 1 1} {
        if {[config $cell PSU__USE__S_AXI_GP$gp]} { lappend intf S_AXI_HPC${n}_FPD; lappend pins saxihpc${n}_fpd_aclk }
      }
      foreach {name gp clock} {M_AXI_HPM0_FPD 0 maxihpm0_fpd_aclk M_AXI_HPM1_FPD 1 maxihpm1_fpd_aclk M_AXI_HPM0_LPD 2 maxihpm0_lpd_aclk} {
        if {[config $cell PSU__USE__M_AXI_GP$gp]} { lappend intf $name; lappend pins $clock }
      }
      foreach n {0 1 2 3} {
        if {[config $cell PSU__FPGA_PL${n}_ENABLE]} { lappend pins pl_clk$n pl_resetn$n }
      }
    }
    xilinx.com:ip:processing_system7* {
      lappend intf DDR FIXED_IO
      foreach n {0 1 2 3} {
        if {[config $cell PCW_USE_S_AXI_HP$n]} { lappend intf S_AXI_HP$n; lappend pins S_AXI_HP${n}_ACLK }
        if {[config $cell PCW_EN_CLK${n}_PORT]} { lappend pins FCLK_CLK$n FCLK_RESET${n}_N }
      }
      foreach n {0 1} {
        if {[config $cell PCW_USE_M_AXI_GP$n]} { lappend intf M_AXI_GP$n; lappend pins M_AXI_GP${n}_ACLK }
      }
    }
    xilinx.com:ip:smartconnect* {
      for {set i 0} {$i < [config $cell NUM_SI 1]} {incr i} { lappend intf [format S%02d_AXI $i] }
      for {set i 0} {$i < [config $cell NUM_MI 1]} {incr i} { lappend intf [format M%02d_AXI $i] }
      lappend pins aclk aresetn
    }
    xilinx.com:ip:proc_sys_reset* {
      lappend pins slowest_sync_clk ext_reset_in aux_reset_in mb_debug_sys_rst dcm_locked \
        mb_reset bus_struct_reset peripheral_reset interconnect_aresetn peripheral_aresetn
    }
    default {
      set ip [dict get $catalog $vlnv]
      set intf [dict get $ip intf]
      set pins [dict get $ip pins]
    }
  }
  if {$kind eq "intf"} { return $intf }
  return $pins
}

proc ::sd::pin {path kind} {
  variable cells
  set parts [split $path /]
  if {[llength $parts] != 2} { fail "pin path $path is not CELL/PIN" }
  lassign $parts cell name
  if {![dict exists $cells $cell]} { fail "no cell $cell (for $path)" }
  if {$name ni [pins_of $cell $kind]} {
    set what [expr {$kind eq "intf" ? "interface pin" : "pin"}]
    fail "cell $cell ([dict get $cells $cell]) has no $what $name; it has: [pins_of $cell $kind]"
  }
  return $path
}

# -- project --------------------------------------------------------------------------------------
proc create_project {args} {
  set pos [::sd::positional $args {-part}]
  set ::sd::project [lindex $pos 0]
  set ::sd::project_dir [file normalize [lindex $pos 1]]
  set ::sd::runs_dir [file join $::sd::project_dir standin_runs impl_1]
  file mkdir $::sd::runs_dir
  ::sd::fact project $::sd::project [lindex $pos 1] [::sd::option $args -part]
  return $::sd::project
}

proc current_project {} {
  if {$::sd::project eq ""} { ::sd::fail "no project open" }
  return project:$::sd::project
}

proc current_fileset {} { return fileset:sources_1 }

proc set_property {args} {
  if {[lindex $args 0] eq "-dict"} {
    set pairs [lindex $args 1]
    set obj [lindex $args 2]
  } else {
    set pairs [lrange $args 0 1]
    set obj [lindex $args 2]
  }
  if {[llength $pairs] % 2} { ::sd::fail "set_property: odd key/value list $pairs" }
  foreach {key value} $pairs {
    if {[string match CONFIG.* $key]} {
      if {![dict exists $::sd::cells $obj]} { ::sd::fail "set_property $key on $obj, which is not a cell" }
      dict set ::sd::props $obj $key $value
      ::sd::fact prop $obj $key $value
    } else {
      if {![string match project:* $obj] && ![string match fileset:* $obj]} {
        ::sd::fail "set_property $key on $obj"
      }
      if {$key eq "ip_repo_paths"} { set ::sd::repos $value }
      ::sd::fact setting $obj $key $value
    }
  }
}

proc update_ip_catalog {} {
  foreach repo $::sd::repos {
    set found [glob -nocomplain -directory $repo standin_ip.tcl]
    if {![llength $found]} { ::sd::fail "ip_repo_paths folder $repo holds no exported IP" }
    source [lindex $found 0]
  }
  ::sd::fact catalog [lsort [dict keys $::sd::catalog]]
}

# -- block design ---------------------------------------------------------------------------------
proc create_bd_design {name} {
  set ::sd::design $name
  ::sd::fact design $name
}

proc create_bd_cell {args} {
  set vlnv [::sd::option $args -vlnv]
  set name [lindex [::sd::positional $args {-type -vlnv}] 0]
  if {[dict exists $::sd::cells $name]} { ::sd::fail "cell $name exists already" }
  set known [dict keys $::sd::catalog]
  set builtin {xilinx.com:ip:zynq_ultra_ps_e xilinx.com:ip:processing_system7 xilinx.com:ip:smartconnect xilinx.com:ip:proc_sys_reset}
  if {$vlnv ni $known && $vlnv ni $builtin} { ::sd::fail "no IP $vlnv in the catalogue ($known)" }
  dict set ::sd::cells $name $vlnv
  ::sd::fact cell $name $vlnv
  return $name
}

proc get_bd_cells {name} {
  if {![dict exists $::sd::cells $name]} { ::sd::fail "no cell $name" }
  return $name
}

proc get_bd_pins {path} { return [::sd::pin $path pin] }
proc get_bd_intf_pins {path} { return [::sd::pin $path intf] }

proc apply_bd_automation {args} {
  set cell [lindex [::sd::positional $args {-rule -config}] 0]
  if {![dict exists $::sd::cells $cell]} { ::sd::fail "apply_bd_automation on $cell, which is not a cell" }
  ::sd::fact automation $cell [::sd::option $args -rule] [::sd::option $args -config]
}

proc connect_bd_net {args} {
  if {[llength $args] < 2} { ::sd::fail "connect_bd_net needs two pins: $args" }
  ::sd::fact net {*}$args
}

proc connect_bd_intf_net {a b} {
  foreach p [list $a $b] {
    if {[dict exists $::sd::connected $p]} { ::sd::fail "interface $p is connected twice" }
    dict set ::sd::connected $p 1
  }
  ::sd::fact intf $a $b
}

proc get_bd_addr_spaces {path} {
  lassign [split $path /] cell space
  if {![dict exists $::sd::cells $cell] || $space ne "Data"} { ::sd::fail "no address space $path" }
  set vlnv [dict get $::sd::cells $cell]
  if {![string match *:zynq_ultra_ps_e* $vlnv] && ![string match *:processing_system7* $vlnv]} {
    ::sd::fail "$cell ($vlnv) is no processing system: it has no address space Data"
  }
  return space:$path
}

proc get_bd_addr_segs {args} {
  set of [::sd::option $args -of_objects]
  if {$of eq ""} { ::sd::fail "get_bd_addr_segs without -of_objects" }
  return seg:$of
}

proc assign_bd_address {args} {
  if {![llength $args]} {
    ::sd::fact assign_all
    return
  }
  set space [::sd::option $args -target_address_space]
  set seg [lindex [::sd::positional $args {-offset -range -target_address_space}] 0]
  if {![string match space:* $space] || ![string match seg:* $seg]} { ::sd::fail "assign_bd_address $args" }
  ::sd::fact addr [string range $space 6 end] [string range $seg 4 end] [::sd::option $args -offset] [::sd::option $args -range]
}

proc validate_bd_design {} { ::sd::fact validate }
proc save_bd_design {} { ::sd::fact save }

# -- files, wrapper, runs -------------------------------------------------------------------------
proc get_files {args} {
  set pos [::sd::positional $args {-of_objects}]
  if {[lsearch -exact $args -of_objects] >= 0} {
    # generated files of the block design: the hardware handoff is what the script asks for
    set name [lindex $pos 0]
    set path [file join $::sd::project_dir standin_gen $name]
    file mkdir [file dirname $path]
    set f [open $path w]; puts $f "stand-in $name"; close $f
    return [list $path]
  }
  set name [lindex $pos 0]
  if {$name ne "$::sd::design.bd"} { ::sd::fail "no file $name in the project" }
  return file:$name
}

proc make_wrapper {args} {
  set f [::sd::option $args -files]
  if {$f ne "file:$::sd::design.bd" || [lsearch -exact $args -top] < 0} { ::sd::fail "make_wrapper $args" }
  ::sd::fact wrapper ${::sd::design}_wrapper
  return [file join $::sd::project_dir ${::sd::design}_wrapper.v]
}

proc add_files {args} { ::sd::fact add_files {*}[::sd::positional $args] }

proc launch_runs {args} {
  set run [lindex [::sd::positional $args {-to_step -jobs}] 0]
  ::sd::fact launch $run [::sd::option $args -to_step]
  set f [open [file join $::sd::runs_dir ${::sd::design}_wrapper.bit] w]; puts $f "stand-in bitstream"; close $f
}

proc wait_on_run {run} { ::sd::fact wait $run }
proc get_runs {name} { return run:$name }

proc get_property {key obj} {
  if {![string match run:* $obj]} { ::sd::fail "get_property $key $obj" }
  switch -- $key {
    PROGRESS { return "100%" }
    DIRECTORY { return $::sd::runs_dir }
    default { ::sd::fail "get_property $key of a run" }
  }
}

proc ::sd::dump {path} {
  set f [open $path w]
  foreach line $::sd::facts { puts $f $line }
  close $f
}
