# Stand-ins for the vitis_hls commands a generated vitis_hls.tcl uses (no Vitis HLS here).
#
# They check what the script relies on (the sources exist, the top function is defined in them,
# a solution is open before its part and clock are set) and record the run: project, top,
# sources and flags, part, clock period, the exported VLNV. `csynth_design` reads the kernel's
# interface pragmas (m_axi bundles, s_axilite) from the sources; `export_design` writes the IP
# as the Vivado stand-ins' catalogue reads it (<project>/<solution>/impl/ip/standin_ip.tcl with
# the interfaces Vitis HLS would give the IP: m_axi_<bundle>, s_axi_control, ap_clk, ap_rst_n,
# interrupt). `exit` ends the script without ending the interpreter.

namespace eval ::sd {
  variable facts {}
  variable project ""
  variable solution ""
  variable top ""
  variable sources {}
  variable interfaces {}
}

proc ::sd::fact {args} {
  variable facts
  lappend facts [join $args "\t"]
}

proc ::sd::fail {msg} {
  return -code error -level 2 "stand-in: $msg"
}

proc ::sd::opt {argv name} {
  set i [lsearch -exact $argv $name]
  if {$i < 0} { return "" }
  return [lindex $argv [expr {$i + 1}]]
}

proc open_project {args} {
  set ::sd::project [lindex $args end]
  file mkdir $::sd::project
  ::sd::fact project $::sd::project
}

proc set_top {name} {
  set ::sd::top $name
  ::sd::fact top $name
}

proc add_files {args} {
  set path [lindex $args 0]
  if {![file isfile $path]} { ::sd::fail "add_files: no file $path" }
  set i [lsearch -exact $args -cflags]
  set flags [expr {$i >= 0 ? [lindex $args [expr {$i + 1}]] : ""}]
  lappend ::sd::sources $path
  ::sd::fact source $path $flags
}

proc open_solution {args} {
  if {$::sd::project eq ""} { ::sd::fail "open_solution before open_project" }
  set ::sd::solution [lindex $args [expr {[lsearch -exact $args -reset] >= 0 ? 1 : 0}]]
  set i [lsearch -exact $args -flow_target]
  ::sd::fact solution $::sd::solution [expr {$i >= 0 ? [lindex $args [expr {$i + 1}]] : "vitis"}]
}

proc set_part {part} {
  if {$::sd::solution eq ""} { ::sd::fail "set_part before open_solution" }
  ::sd::fact part $part
}

proc create_clock {args} {
  if {$::sd::solution eq ""} { ::sd::fail "create_clock before open_solution" }
  set i [lsearch -exact $args -period]
  ::sd::fact clock [lindex $args [expr {$i + 1}]]
}

proc csynth_design {} {
  set text ""
  foreach src $::sd::sources {
    set f [open $src]; append text [read $f]; close $f
  }
  if {![regexp "void\\s+$::sd::top\\s*\\(" $text]} { ::sd::fail "top function $::sd::top is not in [join $::sd::sources]" }
  set intf {}
  foreach {all bundle} [regexp -all -inline {HLS INTERFACE mode=m_axi port=\w+ bundle=(\w+)} $text] {
    if {"m_axi_$bundle" ni $intf} { lappend intf m_axi_$bundle }
  }
  if {[regexp {HLS INTERFACE mode=s_axilite port=return bundle=(\w+)} $text all bundle]} {
    lappend intf s_axi_$bundle
  } elseif {[regexp {HLS INTERFACE mode=s_axilite port=return} $text]} {
    lappend intf s_axi_control
  }
  set ::sd::interfaces $intf
  ::sd::fact csynth $::sd::top {*}$intf
}

proc export_design {args} {
  if {![llength $::sd::interfaces]} { ::sd::fail "export_design before csynth_design" }
  set vlnv [join [list [::sd::opt $args -vendor] [::sd::opt $args -library] [::sd::opt $args -ipname] [::sd::opt $args -version]] :]
  if {[::sd::opt $args -format] ne "ip_catalog"} { ::sd::fail "export_design -format [::sd::opt $args -format]" }
  set dir [file join $::sd::project $::sd::solution impl ip]
  file mkdir $dir
  set f [open [file join $dir standin_ip.tcl] w]
  puts $f [list ::sd::register_ip $vlnv $::sd::interfaces {ap_clk ap_rst_n interrupt}]
  close $f
  set f [open [file join $dir component.xml] w]; puts $f "<!-- stand-in -->"; close $f
  ::sd::fact export $vlnv
}

proc exit {args} {
  ::sd::fact exit
  return -code return
}

proc ::sd::dump {path} {
  set f [open $path w]
  foreach line $::sd::facts { puts $f $line }
  close $f
}
