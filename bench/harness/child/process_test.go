package child

import (
	"bufio"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain makes the test binary its own child when run with -child: a
// small echo of the protocol, so that the parent's side is tested over
// real pipes to a real process.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		fakeChild()
		return
	}
	os.Exit(m.Run())
}

// fakeChild answers STARTED, then CONNECT with READY and SETTLED, EXPECT
// with ARMED 3, and ends on QUIT.
func fakeChild() {
	fmt.Println("STARTED")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "CONNECT":
			fmt.Println("READY")
			fmt.Println("SETTLED 1024 7 1500")
		case "EXPECT":
			fmt.Println("ARMED 3")
		case "QUIT":
			return
		}
	}
}

func TestProtocol(t *testing.T) {
	c, err := Start(os.Args[0], nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Wait("STARTED"); len(f) != 1 {
		t.Fatalf("STARTED fields %v", f)
	}
	c.Send("CONNECT")
	c.Wait("READY")
	bytes, msgs, cpu := c.Settled()
	if bytes != 1024 || msgs != 7 || cpu != 1500*time.Microsecond {
		t.Errorf("Settled = %d, %d, %v; want 1024, 7, 1.5ms", bytes, msgs, cpu)
	}
	c.Send("EXPECT")
	if n := c.Armed(); n != 3 {
		t.Errorf("Armed = %d, want 3", n)
	}
	c.Quit()
}

func TestStartMissingBinary(t *testing.T) {
	if _, err := Start("/nonexistent/xdsbench", nil, time.Second); err == nil {
		t.Fatal("Start of a missing binary returned no error")
	}
}
