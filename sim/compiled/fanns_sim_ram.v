// The word array of a testbench memory (fanns.sim.axi_memory.SimMemory): DEPTH words of WIDTH
// bits, zero at start, READS synchronous read ports (a port's word is registered when its enable
// is high and held otherwise; a read in the cycle of a write to its word returns the old word)
// and one write port with a byte enable per byte. The word array is public (writable from C++):
// the compiled harness loads and reads it in place, without clock cycles (`vm_mem_write` in
// sim/compiled/vmodel.cpp).
//
// Why a hand-written module and not an Amaranth Memory: Amaranth writes a memory's initial value
// word by word through its RTLIL, and converting a bench with memories of tens of thousands of
// 512-bit words took minutes (32,768 words: 125 s) and grew faster than the depth. This module's
// Verilog is the same for every depth.
module fanns_sim_ram #(
    parameter WIDTH = 512,
    parameter DEPTH = 1024,
    parameter ABITS = 10,
    parameter READS = 1
) (
    input wire clk,
    input wire [READS*ABITS-1:0] raddr,
    input wire [READS-1:0] ren,
    output wire [READS*WIDTH-1:0] rdata,
    input wire [ABITS-1:0] waddr,
    input wire [WIDTH-1:0] wdata,
    input wire [WIDTH/8-1:0] wen
);
    reg [WIDTH-1:0] mem [0:DEPTH-1] /*verilator public_flat_rw*/;
    wire [WIDTH-1:0] mask;
    integer i;
    initial begin
        for (i = 0; i < DEPTH; i = i + 1) mem[i] = {WIDTH{1'b0}};
    end
    genvar b, r;
    generate
        for (b = 0; b < WIDTH / 8; b = b + 1) begin : lane
            assign mask[b*8 +: 8] = {8{wen[b]}};
        end
        for (r = 0; r < READS; r = r + 1) begin : port
            reg [WIDTH-1:0] word = {WIDTH{1'b0}};
            always @(posedge clk) begin
                if (ren[r]) word <= mem[raddr[r*ABITS +: ABITS]];
            end
            assign rdata[r*WIDTH +: WIDTH] = word;
        end
    endgenerate
    always @(posedge clk) begin
        if (|wen) mem[waddr] <= (mem[waddr] & ~mask) | (wdata & mask);
    end
endmodule
