package ernic.mesh;

import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/** The channel classes that fit the event loop the node was given (epoll for the device loop, else NIO). */
record Transport(Class<? extends SocketChannel> socket, Class<? extends ServerSocketChannel> server) {
    static final Transport NIO = new Transport(NioSocketChannel.class, NioServerSocketChannel.class);
    static final Transport EPOLL = new Transport(EpollSocketChannel.class, EpollServerSocketChannel.class);

    static Transport forLoop(EventLoop loop) {
        if (loop instanceof IoEventLoop io && io.isIoType(EpollIoHandler.class)) {
            return EPOLL;
        }
        return NIO;
    }
}
